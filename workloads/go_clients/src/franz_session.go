package main

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// session is one logical process's clients (a producer, a consumer, and a client that
// only looks up committed offsets), made on first use, as the Java server's Session.
type session struct {
	producerConfig  producerConfig
	consumerConfig  consumerConfig
	lookupConfig    lookupConfig
	transactional   bool
	autoOffsetReset string
	opTimeout       time.Duration

	producer *kgo.Client
	txn      *kgo.GroupTransactSession // the producer, when transactional
	txnLog   *endLog
	consumer *kgo.Client
	grouped  bool // the consumer subscribed (a group member) rather than assigned
	lookup   *kgo.Client

	mu         sync.Mutex // the rebalance callbacks and async commits run on other goroutines
	assigned   map[topicPart]bool
	positions  map[topicPart]int64 // the next offset each partition returns, where known
	revokedAt  map[topicPart]int64 // positions of revoked partitions, for those given back
	rebalances []any
	asyncErrs  []string
}

func newSession(req request) *session {
	req.Producer.GroupID = req.Consumer.GroupID // the group a transaction commits the consumer's offsets for
	return &session{
		producerConfig: req.Producer, consumerConfig: req.Consumer, lookupConfig: req.Lookup,
		transactional:   req.Producer.TransactionalID != "",
		autoOffsetReset: req.AutoOffsetReset, opTimeout: ms(req.OpTimeoutMs),
		assigned: map[topicPart]bool{}, positions: map[topicPart]int64{}, revokedAt: map[topicPart]int64{},
	}
}

func (s *session) run(req request) (any, *opError) {
	switch req.Cmd {
	case "assign":
		return s.assign(req.Partitions, req.FromBeginning)
	case "subscribe":
		return nil, s.subscribe(req.Topics)
	case "send":
		return s.send(req.Records)
	case "poll":
		return s.poll(req.TimeoutMs)
	case "txn":
		return s.runTxn(req.Mops, req.Abort)
	case "close":
		s.close()
		return nil, nil
	}
	return nil, &opError{"UnknownCommand", req.Cmd, howTable, false}
}

func (s *session) opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opTimeout)
}

func (s *session) producerClient() (*kgo.Client, *opError) {
	if s.producer != nil {
		return s.producer, nil
	}
	s.txnLog = &endLog{}
	opts := producerOpts(s.producerConfig, s.txnLog)
	var err error
	if s.transactional {
		s.txn, err = kgo.NewGroupTransactSession(opts...)
		if err == nil {
			s.producer = s.txn.Client()
		}
	} else {
		s.producer, err = kgo.NewClient(opts...)
	}
	if err != nil { // a bad configuration: nothing was sent
		return nil, &opError{errName(err), err.Error(), howDefinite, false}
	}
	return s.producer, nil
}

func (s *session) lookupClient() (*kgo.Client, error) {
	if s.lookup == nil {
		cl, err := kgo.NewClient(lookupOpts(s.lookupConfig)...)
		if err != nil {
			return nil, err
		}
		s.lookup = cl
	}
	return s.lookup, nil
}

// drainExtra adds what the polls since the last reply saw beside their records.
func (s *session) drainExtra(reply map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.asyncErrs) > 0 {
		reply["poll_errors"], s.asyncErrs = s.asyncErrs, nil
	}
	if len(s.rebalances) > 0 {
		reply["rebalance_log"], s.rebalances = s.rebalances, nil
	}
}

func (s *session) noteAsyncError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asyncErrs = append(s.asyncErrs, errName(err))
}

// close: the producer at once (as the Java server's close(ZERO)); a group consumer
// leaves its group.
func (s *session) close() {
	if s.producer != nil {
		s.producer.Close()
	}
	if s.consumer != nil {
		if s.grouped {
			s.consumer.CloseAllowingRebalance()
		} else {
			s.consumer.Close()
		}
	}
	if s.lookup != nil {
		s.lookup.Close()
	}
	s.producer, s.txn, s.consumer, s.lookup = nil, nil, nil, nil
}
