// Command go-clients serves logtrial's sessions on one Go Kafka client, chosen at start
// by -client (franz-go or sarama), over stdin/stdout, one JSON object a line, speaking the protocol of the Java client's server
// (workloads/java_client/src/logtrial/Server.java): request {"id", "session",
// "cmd", ...}; reply {"id", "ok": value, ...} or {"id", "error": [name, message],
// "how", "retire"}. Each session's requests run in order on its own goroutine;
// replies interleave across sessions (workloads/bridge/process.py matches them by id).
// One program for both: the protocol, the session's bookkeeping and the replies are
// the same (main.go, protocol.go, session.go); each client has only its own calls
// (franz_*.go, sarama_*.go).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// goClient is one client library the program can serve: the module whose version the
// ready line reports, and how a session on it is made.
type goClient struct {
	module     string
	versionKey string // the ready line's (test.json's versions) key for the module
	open       func(request) clientSession
}

var goClients = map[string]goClient{
	"franz-go": {"github.com/twmb/franz-go", "franz_go", newFranzSession},
	"sarama":   {"github.com/IBM/sarama", "sarama", newSaramaSession},
}

type server struct {
	client goClient
	outMu  sync.Mutex
	out    *bufio.Writer
	queues map[int64]chan request // each session's requests, in order
}

func main() {
	name := flag.String("client", "franz-go", "the client library the sessions run on: franz-go or sarama")
	flag.Parse()
	client, ok := goClients[*name]
	if !ok {
		fmt.Fprintf(os.Stderr, "-client must be franz-go or sarama, not %q\n", *name)
		os.Exit(2)
	}
	s := &server{client: client, out: bufio.NewWriter(os.Stdout), queues: map[int64]chan request{}}
	s.reply(map[string]any{"id": -1, "ok": versions(client)}) // ready
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
func versions(client goClient) map[string]string {
	out := map[string]string{"go": runtime.Version(), client.versionKey: "unknown"}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == client.module {
				out[client.versionKey] = dep.Version
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
	var sess clientSession
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

func (s *server) handle(sess *clientSession, req request) (ok any, err *opError) {
	defer func() { // a bug here, or a client panic nobody expected: the harness says CLIENT_CRASH
		if r := recover(); r != nil {
			ok, err = nil, &opError{"CLIENT_CRASH", fmt.Sprint("panic: ", r), howTable, true}
		}
	}()
	if req.Cmd == "open" {
		*sess = s.client.open(req)
		return nil, nil
	}
	if req.Cmd == "echo" {
		return req.Value, nil
	}
	if *sess == nil {
		return nil, &opError{"CLIENT_CRASH", "no open session", howTable, true}
	}
	return run(*sess, req)
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
