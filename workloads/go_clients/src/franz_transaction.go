package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// begin starts a transaction on the session's producer, made on first use.
func (s *franzSession) begin() *opError {
	if _, err := s.producerClient(); err != nil {
		return err
	}
	if err := s.txn.Begin(); err != nil {
		return franzTableError(err)
	}
	return nil
}

// sendAll produces the records and awaits every acknowledgement.
func (s *franzSession) sendAll(records []outRecord) ([]int64, *opError) {
	return s.await(produce(s.producer, records), len(records))
}

// commit ends the transaction with the consumer's positions in it. franz-go aborts by
// itself where the commit cannot go on (an offset commit it calls abortable, a producer
// id that failed first, TRANSACTION_ABORTABLE); what its log said tells those apart from
// an end whose outcome it could not confirm (endLog).
func (s *franzSession) commit(firstPolled map[topicPart]int64) *opError {
	ctx, cancel := s.opContext()
	defer cancel()
	s.txnLog.reset()
	committed, err := s.txn.End(kgo.PreTxnCommitFnContext(ctx, s.offsetsInto), kgo.TryCommit)
	switch {
	case committed:
		return nil
	case err == nil && s.txnLog.unconfirmed():
		return &opError{"UNKNOWN_SERVER_ERROR", "the commit's outcome was not confirmed (during commit)", howIndefinite, true}
	case err == nil:
		return s.aborted(firstPolled, "COMMIT_ABORTED", s.txnLog.why()+" (transaction aborted)")
	case strings.HasPrefix(err.Error(), offsetCommitFailed): // the offsets failed; the abort that followed did not
		return s.aborted(firstPolled, franzErrName(err), err.Error()+" (transaction aborted)")
	}
	return &opError{franzErrName(err), err.Error() + " (during commit)", howIndefinite, true}
}

// what franz-go's End says when the transaction's offset commit failed and it aborted
const offsetCommitFailed = "unable to commit transaction offsets"

// offsetsInto puts the consumer's positions into the transaction's offset commit, as
// the consumer's member (or as no member, generation -1, for an assigned consumer): the
// producer's own group is never joined, so End has no offsets of its own to commit.
func (s *franzSession) offsetsInto(req *kmsg.TxnOffsetCommitRequest) error {
	req.Generation, req.MemberID, req.InstanceID = -1, "", nil
	if s.grouped && s.consumer != nil {
		req.MemberID, req.Generation = s.consumer.GroupMetadata()
	}
	req.Topics = nil
	for topic, partitions := range s.knownPositions() {
		t := kmsg.NewTxnOffsetCommitRequestTopic()
		t.Topic = topic
		for p, eo := range partitions {
			part := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			part.Partition, part.Offset, part.LeaderEpoch = p, eo.Offset, -1
			t.Partitions = append(t.Partitions, part)
		}
		req.Topics = append(req.Topics, t)
	}
	return nil
}

// abort aborts: success makes the op a definite failure under `name`, and the consumer
// is rewound to the first offset the transaction polled on each partition; a failed
// abort is indefinite.
func (s *franzSession) abort(firstPolled map[topicPart]int64, name, message string) *opError {
	ctx, cancel := s.opContext()
	defer cancel()
	if _, err := s.txn.End(ctx, kgo.TryAbort); err != nil {
		return &opError{franzErrName(err), err.Error() + " (during abort)", howIndefinite, true}
	}
	return s.aborted(firstPolled, name, message)
}

func (s *franzSession) aborted(firstPolled map[topicPart]int64, name, message string) *opError {
	if s.consumer != nil {
		s.rewind(firstPolled)
	}
	return &opError{name, message, howDefinite, false}
}

// endLog reads franz-go's log of a transaction's end: End reports "not committed"
// alike for an abort that it chose and for a commit whose outcome an unknown server
// error left open, which it then aborts by bumping the epoch (that cannot undo a
// commit that was written).
type endLog struct {
	mu     sync.Mutex
	notes  []string
	unsure bool
}

func (l *endLog) Level() kgo.LogLevel {
	if debugLog {
		return kgo.LogLevelDebug
	}
	return kgo.LogLevelInfo
}

// LOGTRIAL_FRANZ_GO_DEBUG=1: every line of the producers' log goes to stderr (the harness's log)
var debugLog = os.Getenv("LOGTRIAL_FRANZ_GO_DEBUG") != ""

func (l *endLog) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if debugLog {
		fmt.Fprintln(os.Stderr, append([]any{time.Now().Format("15:04:05.000"), level, msg}, keyvals...)...)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case strings.Contains(msg, "unknown server error"):
		l.unsure = true
	case strings.Contains(msg, "retrying as abort"), strings.Contains(msg, "aborting next commit"):
		l.notes = append(l.notes, msg)
	}
}

func (l *endLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notes, l.unsure = nil, false
}

func (l *endLog) unconfirmed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.unsure
}

func (l *endLog) why() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.notes) == 0 {
		return "franz-go aborted instead of committing: the offset commit failed with an abortable error"
	}
	return "franz-go aborted instead of committing: " + strings.Join(l.notes, "; ")
}
