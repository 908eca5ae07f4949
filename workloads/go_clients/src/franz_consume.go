package main

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// assignedConsumer: a direct consumer (no group membership), as Java's assign().
func (s *franzSession) assignedConsumer() (*kgo.Client, error) {
	if s.consumer == nil {
		cl, err := kgo.NewClient(consumerOpts(s.consumerConfig)...)
		if err != nil {
			return nil, err
		}
		s.consumer = cl
	}
	return s.consumer, nil
}

// assign keeps the position of every partition it keeps; the new ones start at the
// group's committed offset (or the beginning). Returns [[topic, partition, start], ...]
// of the starts it can name, the history's `starts`.
func (s *franzSession) assign(tps []topicPart, fromBeginning bool) (any, *opError) {
	c, err := s.assignedConsumer()
	if err != nil {
		return nil, &opError{franzErrName(err), err.Error(), howDefinite, false}
	}
	want, kept, fresh := s.split(tps)
	dropped := map[string][]int32{}
	for tp := range s.droppedBy(want) {
		dropped[tp.Topic] = append(dropped[tp.Topic], tp.Partition)
	}
	starts := map[topicPart]int64{}
	if !fromBeginning {
		if starts, err = s.committedStarts(fresh); err != nil { // nothing was assigned: definite
			return nil, &opError{franzErrName(err), err.Error(), howDefinite, false}
		}
	}
	c.RemoveConsumePartitions(dropped)
	named := s.startFresh(c, fresh, starts, fromBeginning)
	s.setAssigned(want, named)
	return startsOf(kept, named), nil
}

// startFresh starts each of `fresh` at its committed offset, else where the reset policy
// puts it; returns the starts it can name (the beginning is offset 0). A partition that
// is consumed already is moved, the others added.
func (s *franzSession) startFresh(c *kgo.Client, fresh []topicPart, committed map[topicPart]int64,
	fromBeginning bool) map[topicPart]int64 {
	named, add, move := map[topicPart]int64{}, map[string]map[int32]kgo.Offset{}, map[string]map[int32]kgo.EpochOffset{}
	for _, tp := range fresh {
		offset, ok := committed[tp]
		if !ok && (fromBeginning || !s.resetToEnd()) {
			offset, ok = 0, true
		}
		if ok {
			named[tp] = offset
		}
		s.mu.Lock()
		consumed := s.assigned[tp]
		s.mu.Unlock()
		switch {
		case consumed && ok:
			addTo(move, tp, kgo.EpochOffset{Epoch: -1, Offset: offset})
		case consumed: // where it is: nothing to name, nothing to move
		case ok:
			addTo(add, tp, kgo.NewOffset().At(offset))
		default:
			addTo(add, tp, kgo.NewOffset().AtEnd())
		}
	}
	c.SetOffsets(move)
	c.AddConsumePartitions(add)
	return named
}

// committedStarts: the group's committed offsets, looked up by a client reading
// uncommitted (as clients.lookup_config says why); partitions without one are left out.
func (s *franzSession) committedStarts(tps []topicPart) (map[topicPart]int64, error) {
	starts := map[topicPart]int64{}
	if len(tps) == 0 {
		return starts, nil
	}
	cl, err := s.lookupClient()
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = s.lookupConfig.GroupID
	byTopic := map[string][]int32{}
	for _, tp := range tps {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	for topic, partitions := range byTopic {
		t := kmsg.NewOffsetFetchRequestTopic()
		t.Topic, t.Partitions = topic, partitions
		req.Topics = append(req.Topics, t)
	}
	ctx, cancel := s.opContext()
	defer cancel()
	for {
		err := fetchCommitted(ctx, cl, req, starts)
		if ke, ok := errors.AsType[*kerr.Error](err); !ok || !ke.Retriable || ctx.Err() != nil {
			return starts, err
		}
		// a coordinator that is loading or moving: asked again until the op's time is up,
		// as the Java client's committed() does
		select {
		case <-ctx.Done():
			return starts, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func fetchCommitted(ctx context.Context, cl *kgo.Client, req *kmsg.OffsetFetchRequest, starts map[topicPart]int64) error {
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return err
			}
			if p.Offset >= 0 {
				starts[topicPart{t.Topic, p.Partition}] = p.Offset
			}
		}
	}
	return nil
}

// subscribe replaces the group consumer's topics; its rebalances start the partitions
// they give as assign does (onAssigned), and say so in rebalance_log.
func (s *franzSession) subscribe(topics []string) *opError {
	if s.consumer == nil {
		opts := append(consumerOpts(s.consumerConfig), groupOpts(s.consumerConfig)...)
		opts = append(opts, kgo.ConsumeTopics(topics...), kgo.AdjustFetchOffsetsFn(s.onAssigned),
			kgo.OnPartitionsRevoked(s.onRevoked), kgo.OnPartitionsLost(s.onRevoked))
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return &opError{franzErrName(err), err.Error(), howDefinite, false}
		}
		s.consumer, s.grouped = cl, true
		return nil
	}
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	var gone []string
	for _, t := range s.consumer.GetConsumeTopics() {
		if !want[t] {
			gone = append(gone, t)
		}
	}
	s.consumer.PurgeTopicsFromConsuming(gone...)
	s.consumer.AddConsumeTopics(topics...)
	return nil
}

// onAssigned runs when the group gives partitions, before fetching them: a partition
// given back continues where this consumer was; the others start as assign's do.
func (s *franzSession) onAssigned(_ context.Context, given map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	var tps, fresh []topicPart
	kept := map[topicPart]int64{}
	s.mu.Lock()
	for topic, partitions := range given {
		for p := range partitions {
			tp := topicPart{topic, p}
			tps = append(tps, tp)
			if pos, ok := s.revokedAt[tp]; ok {
				kept[tp] = pos
			} else {
				fresh = append(fresh, tp)
			}
		}
	}
	s.revokedAt = map[topicPart]int64{}
	s.mu.Unlock()
	starts, err := s.committedStarts(fresh)
	if err != nil { // the client starts them itself, where its own lookup says
		s.noteAsyncError(err)
		s.logRebalance("assigned", tps)
		return given, nil
	}
	named := map[topicPart]int64{}
	for _, tp := range fresh {
		if offset, ok := starts[tp]; ok {
			named[tp] = offset
		} else if !s.resetToEnd() {
			named[tp] = 0
		}
	}
	for tp, offset := range kept {
		named[tp] = offset
	}
	s.mu.Lock()
	for _, tp := range tps {
		s.assigned[tp] = true
	}
	for tp, offset := range named {
		s.positions[tp] = offset
		given[tp.Topic][tp.Partition] = kgo.NewOffset().At(offset).WithEpoch(-1)
	}
	s.mu.Unlock()
	s.logRebalance("assigned", tps, startsOf(nil, named))
	return given, nil
}

func (s *franzSession) onRevoked(_ context.Context, _ *kgo.Client, revoked map[string][]int32) {
	var tps []topicPart
	s.mu.Lock()
	for topic, partitions := range revoked {
		for _, p := range partitions {
			tp := topicPart{topic, p}
			tps = append(tps, tp)
			if pos, ok := s.positions[tp]; ok {
				s.revokedAt[tp] = pos
			}
			delete(s.positions, tp)
			delete(s.assigned, tp)
		}
	}
	s.mu.Unlock()
	s.logRebalance("revoked", tps)
}

// poll is one poll: [[topic, partition, offset, value], ...]. A poll that fails returned
// nothing, so consumed nothing: definite. Errors beside records are poll_errors.
func (s *franzSession) poll(timeoutMs int64) (any, *opError) {
	records, err := s.pollOnce(timeoutMs)
	if err != nil {
		return nil, err
	}
	if len(records) > 0 && s.commitsAfterPoll() {
		s.commitAsync()
	}
	return records, nil
}

func (s *franzSession) pollOnce(timeoutMs int64) ([]any, *opError) {
	if s.consumer == nil {
		return nil, &opError{"ErrNotAssigned", "poll before assign or subscribe", howDefinite, false}
	}
	ctx, cancel := context.WithTimeout(context.Background(), ms(timeoutMs))
	defer cancel()
	fetches := s.consumer.PollRecords(ctx, maxPollRecords)
	if s.grouped {
		defer s.consumer.AllowRebalance()
	}
	for _, fe := range fetches.Errors() {
		switch {
		case errors.Is(fe.Err, context.DeadlineExceeded), errors.Is(fe.Err, context.Canceled):
		case errors.Is(fe.Err, kgo.ErrClientClosed):
			return nil, &opError{franzErrName(fe.Err), fe.Err.Error(), howDefinite, false}
		default:
			s.noteAsyncError(fe.Err)
		}
	}
	records := []any{}
	s.mu.Lock()
	defer s.mu.Unlock()
	fetches.EachRecord(func(r *kgo.Record) {
		records = append(records, []any{r.Topic, r.Partition, r.Offset, string(r.Value)})
		s.positions[topicPart{r.Topic, r.Partition}] = r.Offset + 1
	})
	return records, nil
}

// commitsAfterPoll: without auto commit, a non-transactional poll that read something
// commits the consumer's positions (transactions commit them with the transaction).
func (s *franzSession) commitsAfterPoll() bool {
	return !s.transactional && !(s.grouped && s.consumerConfig.EnableAutoCommit)
}

func (s *franzSession) knownPositions() map[string]map[int32]kgo.EpochOffset {
	out := map[string]map[int32]kgo.EpochOffset{}
	for tp, offset := range s.knownOffsets() {
		addTo(out, tp, kgo.EpochOffset{Epoch: -1, Offset: offset})
	}
	return out
}

// commitAsync commits the positions in the background; a failure is a poll_error.
func (s *franzSession) commitAsync() {
	offsets := s.knownPositions()
	if s.grouped {
		s.consumer.CommitOffsets(context.Background(), offsets,
			func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
				s.noteCommitResult(resp, err)
			})
		return
	}
	req := kmsg.NewPtrOffsetCommitRequest() // a member of no group: generation -1
	req.Group, req.Generation, req.MemberID = s.consumerConfig.GroupID, -1, ""
	for topic, partitions := range offsets {
		t := kmsg.NewOffsetCommitRequestTopic()
		t.Topic = topic
		for p, eo := range partitions {
			part := kmsg.NewOffsetCommitRequestTopicPartition()
			part.Partition, part.Offset, part.LeaderEpoch = p, eo.Offset, -1
			t.Partitions = append(t.Partitions, part)
		}
		req.Topics = append(req.Topics, t)
	}
	cl := s.consumer
	go func() {
		ctx, cancel := s.opContext()
		defer cancel()
		resp, err := req.RequestWith(ctx, cl)
		s.noteCommitResult(resp, err)
	}()
}

func (s *franzSession) noteCommitResult(resp *kmsg.OffsetCommitResponse, err error) {
	if err != nil {
		s.noteAsyncError(err)
		return
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				s.noteAsyncError(err)
				return
			}
		}
	}
}

// rewind moves the consumer back to `to` (a transaction's first polled offsets).
func (s *franzSession) rewind(to map[topicPart]int64) {
	move := map[string]map[int32]kgo.EpochOffset{}
	s.mu.Lock()
	for tp, offset := range to {
		addTo(move, tp, kgo.EpochOffset{Epoch: -1, Offset: offset})
		s.positions[tp] = offset
	}
	s.mu.Unlock()
	if len(move) > 0 {
		s.consumer.SetOffsets(move)
	}
}
