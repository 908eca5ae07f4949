package main

import (
	"github.com/IBM/sarama"
)

// begin starts a transaction on the session's producer, made on first use. A producer
// in an error state refuses: nothing was sent, and the session retires.
func (s *saramaSession) begin() *opError {
	p, err := s.producerClient()
	if err != nil {
		return err
	}
	if err := p.BeginTxn(); err != nil {
		return &opError{saramaErrName(err), err.Error(), howDefinite, true}
	}
	return nil
}

// commit ends the transaction with the consumer's positions in it. Sarama refuses to
// commit a transaction in an error state (a send failed, say) before sending anything:
// that one is aborted instead. Once CommitTxn has started, any error leaves the outcome
// unknown: its offset commit and EndTxn are retried inside it, and nothing it returns
// tells whether an EndTxn reached the coordinator.
func (s *saramaSession) commit(firstPolled map[topicPart]int64) *opError {
	if s.producer.TxnStatus()&sarama.ProducerTxnFlagInError != 0 {
		return s.abort(firstPolled, "ErrTransactionNotReady", "the transaction had failed before its commit")
	}
	if offsets := s.txnOffsets(); len(offsets) > 0 {
		if err := s.producer.AddOffsetsToTxn(offsets, s.consumerConfig.GroupID); err != nil { // kept in memory: nothing sent
			return s.abort(firstPolled, saramaErrName(err), err.Error())
		}
	}
	return s.bounded(s.producer.CommitTxn, "commit")
}

// txnOffsets: the consumer's positions, as AddOffsetsToTxn takes them.
func (s *saramaSession) txnOffsets() map[string][]*sarama.PartitionOffsetMetadata {
	out := map[string][]*sarama.PartitionOffsetMetadata{}
	for tp, offset := range s.knownOffsets() {
		out[tp.Topic] = append(out[tp.Topic], &sarama.PartitionOffsetMetadata{Partition: tp.Partition,
			Offset: offset, LeaderEpoch: -1})
	}
	return out
}

// bounded runs a transaction's end, which Sarama bounds only by its retry counts, for at
// most the op's time. Its failure, or no answer by then, leaves the outcome unknown: the
// call goes on, and the session retires.
func (s *saramaSession) bounded(end func() error, what string) *opError {
	result := make(chan error, 1)
	go func() { result <- end() }()
	ctx, cancel := s.opContext()
	defer cancel()
	select {
	case err := <-result:
		if err != nil {
			return &opError{saramaErrName(err), err.Error() + " (during " + what + ")", howIndefinite, true}
		}
		return nil
	case <-ctx.Done():
		return &opError{"OP_TIMEOUT", "the " + what + " did not end in time (during " + what + ")", howIndefinite, true}
	}
}

// abort aborts: success makes the op a definite failure under `name`, and the consumer
// is rewound to the first offset the transaction polled on each partition; a failed
// abort is indefinite.
func (s *saramaSession) abort(firstPolled map[topicPart]int64, name, message string) *opError {
	if err := s.bounded(s.producer.AbortTxn, "abort"); err != nil {
		return err
	}
	if s.consumer != nil {
		s.rewind(firstPolled)
	}
	return &opError{name, message, howDefinite, false}
}
