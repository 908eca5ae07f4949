package main

import (
	"time"

	"github.com/IBM/sarama"
)

// saramaDelivery is one record's acknowledgement (its offset) or failure, tagged with
// the send it belongs to: a send that timed out leaves its deliveries to come later,
// and the next send must not take them for its own.
type saramaDelivery struct {
	send   int64
	slot   int
	offset int64
	err    error
	at     int64 // when it arrived, epoch ms (the late-batch probe's timeline)
}

type saramaTag struct {
	send int64
	slot int
}

// producerClient: the session's producer, made on first use. Making it is a network
// call (InitProducerId, for an idempotent producer): a failure is definite, nothing was sent.
func (s *saramaSession) producerClient() (sarama.AsyncProducer, *opError) {
	if s.producer != nil {
		return s.producer, nil
	}
	p, err := sarama.NewAsyncProducer(s.producerConfig.Brokers, saramaProducerConfig(s.producerConfig))
	if err != nil {
		return nil, &opError{saramaErrName(err), err.Error(), howDefinite, false}
	}
	s.producer, s.deliveries = p, make(chan saramaDelivery, 1<<14)
	go forwardDeliveries(p, s.deliveries)
	return p, nil
}

// forwardDeliveries hands every success and failure to the session, until the
// producer closes: Sarama blocks if its channels are not read.
func forwardDeliveries(p sarama.AsyncProducer, out chan<- saramaDelivery) {
	successes, failures := p.Successes(), p.Errors()
	for successes != nil || failures != nil {
		select {
		case m, ok := <-successes:
			if !ok {
				successes = nil
				continue
			}
			tag := m.Metadata.(saramaTag)
			out <- saramaDelivery{tag.send, tag.slot, m.Offset, nil, nowMs()}
		case e, ok := <-failures:
			if !ok {
				failures = nil
				continue
			}
			tag, _ := e.Msg.Metadata.(saramaTag)
			out <- saramaDelivery{tag.send, tag.slot, -1, e.Err, nowMs()}
		}
	}
}

// produce hands the records to the producer as one send; returns the send's tag.
func (s *saramaSession) produce(records []outRecord) int64 {
	s.sends++
	for i, r := range records {
		s.producer.Input() <- &sarama.ProducerMessage{Topic: r.Topic, Partition: r.Partition,
			Key: sarama.StringEncoder(r.Key), Value: sarama.StringEncoder(r.Value),
			Metadata: saramaTag{s.sends, i}}
	}
	return s.sends
}

// await waits until every record of the send is acknowledged or the op's time is up;
// the offsets in order. A record that failed goes to the error table; one not
// acknowledged in time is OP_TIMEOUT: it may still be written.
func (s *saramaSession) await(send int64, count int) ([]int64, *opError) {
	offsets := make([]int64, count)
	timeout := time.NewTimer(s.opTimeout)
	defer timeout.Stop()
	for done := 0; done < count; {
		select {
		case d := <-s.deliveries:
			if d.send != send {
				continue // an earlier send's, which timed out
			}
			if d.err != nil {
				return nil, saramaTableError(d.err)
			}
			offsets[d.slot] = d.offset
			done++
		case <-timeout.C:
			return nil, &opError{"OP_TIMEOUT", "no acknowledgement in time", howTable, false}
		}
	}
	return offsets, nil
}

func (s *saramaSession) producerReady() *opError {
	_, err := s.producerClient()
	return err
}

// sendAll produces the records and awaits every acknowledgement.
func (s *saramaSession) sendAll(records []outRecord) ([]int64, *opError) {
	return s.await(s.produce(records), len(records))
}
