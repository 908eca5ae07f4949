package main

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// timedTxn is the late-batch probe's transaction with franz-go (as saramaSession's and
// the Java server's Session.timedTxn): begins, sends the records, waits up to `wait` for
// their acknowledgements, then ends the transaction through the session's
// GroupTransactSession, as the workload does. One End, bounded by `retry` or the op
// timeout, whichever is longer: franz-go's End is not to be called again after an error
// (its documentation), and an abort first waits, in AbortBufferedRecords, until every
// request in flight is answered. Times are epoch ms; each send as seen ({"at", "offset"}
// or {"at", "error"}; empty if unresolved when End returned); "ends" holds the one
// [outcome, started, ended].
func (s *franzSession) timedTxn(records []outRecord, wait time.Duration, commit bool, retry time.Duration) (any, *opError) {
	out := map[string]any{"begun": nowMs()}
	if err := s.begin(); err != nil {
		return nil, err
	}
	done := produce(s.producer, records)
	seen := newSeen(len(records))
	collectFranz(done, seen, time.After(wait))
	out["waited"] = nowMs()
	ctx, cancel := context.WithTimeout(context.Background(), max(retry, s.opTimeout))
	defer cancel()
	started := nowMs()
	committed, err := s.txn.End(ctx, kgo.TransactionEndTry(commit))
	outcome := "ok"
	switch {
	case err != nil:
		outcome = franzErrName(err)
	case commit && !committed:
		outcome = "COMMIT_ABORTED"
	}
	out["ends"] = []any{[]any{outcome, started, nowMs()}}
	collectFranz(done, seen, nil) // what arrived while End waited
	out["sends"] = seen
	return out, nil
}

// collectFranz notes the send's deliveries as they arrive, until all are in or `until`
// fires; with no `until`, only those that have arrived.
func collectFranz(done chan delivery, seen []map[string]any, until <-chan time.Time) {
	for pending := countEmpty(seen); pending > 0; pending-- {
		d, ok := nextFrom(done, until)
		if !ok {
			return
		}
		note(seen[d.slot], d.at, d.offset, d.err, franzErrName)
	}
}
