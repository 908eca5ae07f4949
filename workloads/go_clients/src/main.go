// Command franz-go-client serves logtrial's franz-go sessions over stdin/stdout,
// one JSON object a line, speaking the protocol of the Java client's server
// (workloads/java_client/src/logtrial/Server.java): request {"id", "session",
// "cmd", ...}; reply {"id", "ok": value, ...} or {"id", "error": [name, message],
// "how", "retire"}. Each session's requests run in order on its own goroutine;
// replies interleave across sessions (workloads/bridge/process.py matches them by id).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

const franzGoModule = "github.com/twmb/franz-go"

type server struct {
	outMu  sync.Mutex
	out    *bufio.Writer
	queues map[int64]chan request // each session's requests, in order
}

func main() {
	s := &server{out: bufio.NewWriter(os.Stdout), queues: map[int64]chan request{}}
	s.reply(map[string]any{"id": -1, "ok": versions()}) // ready
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintf(os.Stderr, "not a request: %v\n", err)
			continue
		}
		s.enqueue(req)
	}
	os.Exit(0) // stdin closed: the harness is done (or gone)
}

// versions: what the ready line tells the harness (test.json's versions).
func versions() map[string]string {
	out := map[string]string{"go": runtime.Version(), "franz_go": "unknown"}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == franzGoModule {
				out["franz_go"] = dep.Version
			}
		}
	}
	return out
}

func (s *server) enqueue(req request) {
	queue, ok := s.queues[req.Session]
	if !ok {
		queue = make(chan request, 16)
		s.queues[req.Session] = queue
		go s.serve(queue)
	}
	queue <- req
	if req.Cmd == "close" {
		delete(s.queues, req.Session)
		close(queue)
	}
}

// serve runs one session's requests in order: its clients are used from this goroutine only.
func (s *server) serve(queue chan request) {
	var sess *session
	for req := range queue {
		reply := map[string]any{"id": req.ID}
		ok, err := s.handle(&sess, req)
		if err != nil {
			reply["error"] = []string{err.name, err.message}
			reply["how"] = err.how
			reply["retire"] = err.retire
		} else {
			reply["ok"] = ok
		}
		if sess != nil {
			sess.drainExtra(reply)
		}
		s.reply(reply)
	}
}

func (s *server) handle(sess **session, req request) (ok any, err *opError) {
	defer func() { // a bug here, or a client panic nobody expected: the harness says CLIENT_CRASH
		if r := recover(); r != nil {
			ok, err = nil, &opError{"CLIENT_CRASH", fmt.Sprint("panic: ", r), howTable, true}
		}
	}()
	if req.Cmd == "open" {
		*sess = newSession(req)
		return nil, nil
	}
	if req.Cmd == "echo" {
		return req.Value, nil
	}
	if *sess == nil {
		return nil, &opError{"CLIENT_CRASH", "no open session", howTable, true}
	}
	return (*sess).run(req)
}

func (s *server) reply(reply map[string]any) {
	line, err := json.Marshal(reply)
	if err != nil {
		line, _ = json.Marshal(map[string]any{"id": reply["id"], "error": []string{"CLIENT_CRASH", err.Error()},
			"how": howTable, "retire": true})
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.out.Write(line)
	s.out.WriteByte('\n')
	s.out.Flush()
}
