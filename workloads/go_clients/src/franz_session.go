package main

import (
	"github.com/twmb/franz-go/pkg/kgo"
)

// franzSession is one logical process's clients on franz-go's kgo (a producer, a
// consumer, and a client that only looks up committed offsets), made on first use, as
// the Java server's Session.
type franzSession struct {
	sessionState
	producer *kgo.Client
	txn      *kgo.GroupTransactSession // the producer, when transactional
	txnLog   *endLog
	consumer *kgo.Client
	grouped  bool // the consumer subscribed (a group member) rather than assigned
	lookup   *kgo.Client
}

func newFranzSession(req request) clientSession {
	return &franzSession{sessionState: newSessionState(req)}
}

func (s *franzSession) producerClient() (*kgo.Client, *opError) {
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
		return nil, &opError{franzErrName(err), err.Error(), howDefinite, false}
	}
	return s.producer, nil
}

func (s *franzSession) lookupClient() (*kgo.Client, error) {
	if s.lookup == nil {
		cl, err := kgo.NewClient(lookupOpts(s.lookupConfig)...)
		if err != nil {
			return nil, err
		}
		s.lookup = cl
	}
	return s.lookup, nil
}

func (s *franzSession) noteAsyncError(err error) { s.noteAsyncName(franzErrName(err)) }

// close: the producer at once (as the Java server's close(ZERO)); a group consumer
// leaves its group.
func (s *franzSession) close() {
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
