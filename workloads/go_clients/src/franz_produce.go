package main

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// delivery is one record's acknowledgement: its offset, or why it failed.
type delivery struct {
	slot   int
	offset int64
	err    error
	at     int64 // when it arrived, epoch ms (the late-batch probe's timeline)
}

// produce hands the records to the client; each one's delivery arrives on the channel.
func produce(cl *kgo.Client, records []outRecord) chan delivery {
	done := make(chan delivery, len(records))
	for i, r := range records {
		slot := i
		cl.Produce(context.Background(), &kgo.Record{Topic: r.Topic, Partition: r.Partition,
			Key: []byte(r.Key), Value: []byte(r.Value)}, func(rec *kgo.Record, err error) {
			done <- delivery{slot, rec.Offset, err, nowMs()}
		})
	}
	return done
}

// await waits until every record is acknowledged or the op's time is up; the offsets
// in order. A record that failed goes to the error table; one not acknowledged in
// time is OP_TIMEOUT: it may still be written.
func (s *franzSession) await(done chan delivery, count int) ([]int64, *opError) {
	offsets := make([]int64, count)
	timeout := time.NewTimer(s.opTimeout)
	defer timeout.Stop()
	for range count {
		select {
		case d := <-done:
			if d.err != nil {
				return nil, franzTableError(d.err)
			}
			offsets[d.slot] = d.offset
		case <-timeout.C:
			return nil, &opError{"OP_TIMEOUT", "no acknowledgement in time", howTable, false}
		}
	}
	return offsets, nil
}

func (s *franzSession) producerReady() *opError {
	_, err := s.producerClient()
	return err
}
