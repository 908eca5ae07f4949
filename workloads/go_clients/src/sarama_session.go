package main

import (
	"log"
	"os"

	"github.com/IBM/sarama"
)

// LOGTRIAL_SARAMA_DEBUG=1: Sarama's log (its retries, its transaction manager's
// state changes) goes to stderr, the harness's log
func init() {
	if os.Getenv("LOGTRIAL_SARAMA_DEBUG") != "" {
		sarama.Logger = log.New(os.Stderr, "[sarama] ", log.Lmicroseconds)
		sarama.DebugLogger = sarama.Logger // its transaction manager's and producer's debug lines too
	}
}

// saramaSession is one logical process's clients on Sarama: an async producer (the
// transactional one under --txn), a consumer of assigned partitions, and a client that
// only looks up committed offsets, made on first use, as the Java server's Session.
type saramaSession struct {
	sessionState
	producer   sarama.AsyncProducer
	deliveries chan saramaDelivery // every acknowledgement or failure, tagged with its send
	sends      int64               // the send (or transaction) whose deliveries are awaited

	consumerClient sarama.Client
	consumer       sarama.Consumer
	partitions     map[topicPart]sarama.PartitionConsumer
	lookup         sarama.Client
}

func newSaramaSession(req request) clientSession {
	return &saramaSession{sessionState: newSessionState(req), partitions: map[topicPart]sarama.PartitionConsumer{}}
}

// subscribe: the harness refuses --sub-via subscribe for Sarama before a run
// (workloads/go_clients/config.py, sarama_gaps)
func (s *saramaSession) subscribe([]string) *opError {
	return &opError{"UnknownCommand", "subscribe: not on Sarama", howDefinite, false}
}

func (s *saramaSession) noteAsyncError(err error) { s.noteAsyncName(saramaErrName(err)) }

func (s *saramaSession) lookupClient() (sarama.Client, error) {
	if s.lookup == nil {
		cl, err := sarama.NewClient(s.lookupConfig.Brokers, saramaLookupConfig(s.lookupConfig))
		if err != nil {
			return nil, err
		}
		s.lookup = cl
	}
	return s.lookup, nil
}

// close: the producer without waiting (as the Java server's close(ZERO)), then the
// consumer and the clients.
func (s *saramaSession) close() {
	if s.producer != nil {
		s.producer.AsyncClose()
	}
	for _, pc := range s.partitions {
		pc.AsyncClose()
	}
	if s.consumer != nil {
		s.consumer.Close()
	}
	for _, cl := range []sarama.Client{s.consumerClient, s.lookup} {
		if cl != nil {
			cl.Close()
		}
	}
	s.producer, s.consumer, s.consumerClient, s.lookup = nil, nil, nil, nil
	s.partitions = map[topicPart]sarama.PartitionConsumer{}
}
