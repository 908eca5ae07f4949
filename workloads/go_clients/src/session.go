package main

import (
	"context"
	"sort"
	"sync"
	"time"
)

const maxPollRecords = 500 // as the Java client's max.poll.records

// clientSession is one logical process's clients on one Go client library: each op of
// the protocol (run dispatches the session's requests, in order), and what its polls saw
// beside their records for the reply.
type clientSession interface {
	txnSteps
	assign(tps []topicPart, fromBeginning bool) (any, *opError)
	subscribe(topics []string) *opError
	producerReady() *opError // the session's producer, made on first use
	warm(tps []topicPart) *opError
	poll(timeoutMs int64) (any, *opError)
	close()
	drainExtra(reply map[string]any)
}

func run(s clientSession, req request) (any, *opError) {
	switch req.Cmd {
	case "assign":
		return s.assign(req.Partitions, req.FromBeginning)
	case "subscribe":
		return nil, s.subscribe(req.Topics)
	case "warm": // before the harness's clock starts (harness/client_open.py)
		return nil, s.warm(req.Partitions)
	case "send": // with the idempotent (or plain) producer; every acknowledgement awaited
		if err := s.producerReady(); err != nil {
			return nil, err
		}
		return s.sendAll(req.Records)
	case "poll":
		return s.poll(req.TimeoutMs)
	case "txn":
		return runTxn(s, req.Mops, req.Abort)
	case "timed_txn":
		if timed, ok := s.(timedTxnSession); ok {
			return timed.timedTxn(req.Records, ms(req.WaitMs), req.Commit, ms(req.RetryMs))
		}
	case "close":
		s.close()
		return nil, nil
	}
	return nil, &opError{"UnknownCommand", req.Cmd, howTable, false}
}

// timedTxnSession: a client the late-batch probe can time (harness/probes/late_batch.py).
type timedTxnSession interface {
	timedTxn(records []outRecord, wait time.Duration, commit bool, retry time.Duration) (any, *opError)
}

// sessionState is what every client's session keeps alike: its settings, and where its
// consumer is, which the replies report (assign's starts, rebalance_log, poll_errors).
type sessionState struct {
	producerConfig  producerConfig
	consumerConfig  consumerConfig
	lookupConfig    lookupConfig
	transactional   bool
	autoOffsetReset string
	opTimeout       time.Duration

	mu         sync.Mutex // the rebalance callbacks and async commits run on other goroutines
	assigned   map[topicPart]bool
	positions  map[topicPart]int64 // the next offset each partition returns, where known
	revokedAt  map[topicPart]int64 // positions of revoked partitions, for those given back
	rebalances []any
	asyncErrs  []string
}

func newSessionState(req request) sessionState {
	req.Producer.GroupID = req.Consumer.GroupID // the group a transaction commits the consumer's offsets for
	return sessionState{
		producerConfig: req.Producer, consumerConfig: req.Consumer, lookupConfig: req.Lookup,
		transactional:   req.Producer.TransactionalID != "",
		autoOffsetReset: req.AutoOffsetReset, opTimeout: ms(req.OpTimeoutMs),
		assigned: map[topicPart]bool{}, positions: map[topicPart]int64{}, revokedAt: map[topicPart]int64{},
	}
}

func (s *sessionState) resetToEnd() bool { return s.autoOffsetReset == "latest" }

func (s *sessionState) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opTimeout)
}

// drainExtra adds what the polls since the last reply saw beside their records.
func (s *sessionState) drainExtra(reply map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.asyncErrs) > 0 {
		reply["poll_errors"], s.asyncErrs = s.asyncErrs, nil
	}
	if len(s.rebalances) > 0 {
		reply["rebalance_log"], s.rebalances = s.rebalances, nil
	}
}

// noteAsyncName records an error seen beside a poll's records, by its table name.
func (s *sessionState) noteAsyncName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asyncErrs = append(s.asyncErrs, name)
}

func (s *sessionState) logRebalance(what string, tps []topicPart, starts ...any) {
	sort.Slice(tps, func(i, j int) bool {
		return tps[i].Topic < tps[j].Topic || tps[i].Topic == tps[j].Topic && tps[i].Partition < tps[j].Partition
	})
	pairs := []any{}
	for _, tp := range tps {
		pairs = append(pairs, []any{tp.Topic, tp.Partition})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebalances = append(s.rebalances, append([]any{what, pairs}, starts...))
}

// split: an assignment of `tps` as the partitions wanted, those kept (assigned already,
// at a known position, which they keep) and the fresh ones (to start anew).
func (s *sessionState) split(tps []topicPart) (map[topicPart]bool, map[topicPart]int64, []topicPart) {
	s.mu.Lock()
	defer s.mu.Unlock()
	want, kept, fresh := map[topicPart]bool{}, map[topicPart]int64{}, []topicPart{}
	for _, tp := range tps {
		want[tp] = true
		if pos, ok := s.positions[tp]; ok && s.assigned[tp] {
			kept[tp] = pos
		} else {
			fresh = append(fresh, tp)
		}
	}
	return want, kept, fresh
}

// setAssigned makes `want` the assignment: the positions of the partitions it leaves
// out are forgotten, those of `named` set.
func (s *sessionState) setAssigned(want map[topicPart]bool, named map[topicPart]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.assigned = want
	for tp := range s.positions {
		if !want[tp] {
			delete(s.positions, tp)
		}
	}
	for tp, offset := range named {
		s.positions[tp] = offset
	}
}

// droppedBy: the partitions assigned now that `want` leaves out.
func (s *sessionState) droppedBy(want map[topicPart]bool) map[topicPart]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	dropped := map[topicPart]bool{}
	for tp := range s.assigned {
		if !want[tp] {
			dropped[tp] = true
		}
	}
	return dropped
}

// knownOffsets: the positions of the partitions still assigned.
func (s *sessionState) knownOffsets() map[topicPart]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[topicPart]int64{}
	for tp, offset := range s.positions {
		if s.assigned[tp] {
			out[tp] = offset
		}
	}
	return out
}

func addTo[V any](m map[string]map[int32]V, tp topicPart, v V) {
	if m[tp.Topic] == nil {
		m[tp.Topic] = map[int32]V{}
	}
	m[tp.Topic][tp.Partition] = v
}

// startsOf: the history's starts, [[topic, partition, start], ...], the kept ones first.
func startsOf(kept, named map[topicPart]int64) []any {
	all := map[topicPart]int64{}
	for tp, o := range named {
		all[tp] = o
	}
	for tp, o := range kept {
		all[tp] = o
	}
	out := []any{}
	for tp, o := range all {
		out = append(out, []any{tp.Topic, tp.Partition, o})
	}
	return out
}
