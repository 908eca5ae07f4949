package main

import (
	"time"
)

// timedTxn is the late-batch probe's transaction (as the Java server's Session.timedTxn):
// begins, sends the records, waits up to `wait` for their acknowledgements, then commits
// or aborts, with no bound of its own (Sarama's end waits for what is in flight). An end
// that failed is tried again while `retry` has not passed since the first try. It says
// when each step happened, in epoch ms: "begun", "waited", each send as it was seen
// ({"at", "offset"} or {"at", "error"}; empty if unresolved when the end returned), and
// each end's try [outcome, started, ended].
func (s *saramaSession) timedTxn(records []outRecord, wait time.Duration, commit bool, retry time.Duration) (any, *opError) {
	out := map[string]any{"begun": nowMs()}
	if err := s.begin(); err != nil {
		return nil, err
	}
	send := s.produce(records)
	seen := newSeen(len(records))
	s.collect(send, seen, time.After(wait))
	out["waited"] = nowMs()
	end := s.producer.AbortTxn
	if commit {
		end = s.producer.CommitTxn
	}
	var ends []any
	for first := time.Now(); ; {
		started := nowMs()
		outcome := "ok"
		if err := end(); err != nil {
			outcome = saramaErrName(err)
		}
		ends = append(ends, []any{outcome, started, nowMs()})
		if outcome == "ok" || time.Since(first) >= retry {
			break
		}
	}
	s.collect(send, seen, nil) // what arrived while the end waited
	out["ends"], out["sends"] = ends, seen
	return out, nil
}

// collect notes the send's deliveries, until all are in or `until` fires; with no
// `until`, only those that have arrived.
func (s *saramaSession) collect(send int64, seen []map[string]any, until <-chan time.Time) {
	for pending := countEmpty(seen); pending > 0; {
		d, ok := nextFrom(s.deliveries, until)
		if !ok {
			return
		}
		if d.send != send {
			continue
		}
		note(seen[d.slot], d.at, d.offset, d.err, saramaErrName)
		pending--
	}
}
