package main

import "time"

// What the clients' timedTxn (sarama_timed.go, franz_timed.go) share: each send's slot
// of what was seen of it, and the deliveries' wait.

// newSeen: one empty slot per record; a delivery fills its slot.
func newSeen(n int) []map[string]any {
	seen := make([]map[string]any, n)
	for i := range seen {
		seen[i] = map[string]any{}
	}
	return seen
}

// nextFrom: the next value from ch, waiting until `until` fires; with no `until`, only
// one already there. False if none came.
func nextFrom[T any](ch <-chan T, until <-chan time.Time) (T, bool) {
	var none T
	if until == nil {
		select {
		case v := <-ch:
			return v, true
		default:
			return none, false
		}
	}
	select {
	case v := <-ch:
		return v, true
	case <-until:
		return none, false
	}
}

// note fills a send's slot: when its delivery came, and its offset or its error's name.
func note(slot map[string]any, at, offset int64, err error, errName func(error) string) {
	slot["at"] = at
	if err != nil {
		slot["error"] = errName(err)
	} else {
		slot["offset"] = offset
	}
}

func countEmpty(seen []map[string]any) int {
	n := 0
	for _, m := range seen {
		if len(m) == 0 {
			n++
		}
	}
	return n
}

func nowMs() int64 { return time.Now().UnixMilli() }
