package main

import (
	"errors"
	"reflect"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
)

// assignedConsumer: a consumer of assigned partitions (no group membership), as Java's assign().
func (s *saramaSession) assignedConsumer() (sarama.Consumer, error) {
	if s.consumer == nil {
		cl, err := sarama.NewClient(s.consumerConfig.Brokers, saramaConsumerConfig(s.consumerConfig))
		if err != nil {
			return nil, err
		}
		c, err := sarama.NewConsumerFromClient(cl)
		if err != nil {
			cl.Close()
			return nil, err
		}
		s.consumerClient, s.consumer = cl, c
	}
	return s.consumer, nil
}

// assign keeps the position of every partition it keeps; the new ones start at the
// group's committed offset (or the beginning). Returns [[topic, partition, start], ...]
// of the starts it can name, the history's `starts`. A partition Sarama cannot start
// (its leader unknown, say) leaves the assignment half made: indefinite, and retired.
func (s *saramaSession) assign(tps []topicPart, fromBeginning bool) (any, *opError) {
	if _, err := s.assignedConsumer(); err != nil {
		return nil, &opError{saramaErrName(err), err.Error(), howDefinite, false}
	}
	want, kept, fresh := s.split(tps)
	starts := map[topicPart]int64{}
	if !fromBeginning {
		var err error
		if starts, err = s.committedStarts(fresh); err != nil { // nothing was assigned: definite
			return nil, &opError{saramaErrName(err), err.Error(), howDefinite, false}
		}
	}
	for tp, pc := range s.partitions {
		if !want[tp] {
			pc.Close()
			delete(s.partitions, tp)
		}
	}
	named, err := s.startFresh(fresh, starts, fromBeginning)
	s.setAssigned(want, named)
	if err != nil {
		return nil, &opError{saramaErrName(err), err.Error() + " (assignment half made)", howIndefinite, true}
	}
	return startsOf(kept, named), nil
}

// startFresh starts each of `fresh` at its committed offset, else where the reset
// policy puts it; returns the starts it can name. A partition consumed already is
// restarted where it is named to start, or left where it is.
func (s *saramaSession) startFresh(fresh []topicPart, committed map[topicPart]int64, fromBeginning bool) (map[topicPart]int64, error) {
	named := map[topicPart]int64{}
	for _, tp := range fresh {
		offset, ok := committed[tp]
		if !ok && (fromBeginning || !s.resetToEnd()) {
			offset, ok = 0, true
		}
		_, consumed := s.partitions[tp]
		if consumed && !ok {
			continue // where it is: nothing to name, nothing to move
		}
		if !ok {
			offset = sarama.OffsetNewest
		}
		named_, err := s.startAt(tp, offset)
		if err != nil {
			return named, err
		}
		if ok && named_ {
			named[tp] = offset
		}
	}
	return named, nil
}

// startAt (re)starts the partition's consumer at `offset`; false when the offset was out
// of range, so it started where the reset policy says instead (a start it cannot name).
func (s *saramaSession) startAt(tp topicPart, offset int64) (bool, error) {
	if pc, ok := s.partitions[tp]; ok {
		pc.Close() // Sarama refuses a second consumer of one partition
		delete(s.partitions, tp)
	}
	pc, err := s.consumer.ConsumePartition(tp.Topic, tp.Partition, offset)
	exact := true
	if errors.Is(err, sarama.ErrOffsetOutOfRange) {
		exact = false
		pc, err = s.consumer.ConsumePartition(tp.Topic, tp.Partition, s.consumerClient.Config().Consumer.Offsets.Initial)
	}
	if err != nil {
		return false, err
	}
	s.partitions[tp] = pc
	return exact && offset >= 0, nil
}

// committedStarts: the group's committed offsets, looked up by a plain client with an
// OffsetFetch that does not wait for stable offsets (as clients.lookup_config says why);
// partitions without one are left out. A coordinator loading or moving is asked again
// until the op's time is up, as the Java client's committed() does.
func (s *saramaSession) committedStarts(tps []topicPart) (map[topicPart]int64, error) {
	starts := map[topicPart]int64{}
	if len(tps) == 0 {
		return starts, nil
	}
	cl, err := s.lookupClient()
	if err != nil {
		return nil, err
	}
	byTopic := map[string][]int32{}
	for _, tp := range tps {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	ctx, cancel := s.opContext()
	defer cancel()
	for {
		err := s.fetchCommitted(cl, byTopic, starts)
		if err == nil || !retriable(err) || ctx.Err() != nil {
			return starts, err
		}
		select {
		case <-ctx.Done():
			return starts, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// retriable: a broker error Kafka calls retriable, or the connection's failure.
func retriable(err error) bool {
	if ke, ok := errors.AsType[sarama.KError](err); ok {
		known, isKerr := errors.AsType[*kerr.Error](kerr.ErrorForCode(int16(ke)))
		return isKerr && known.Retriable
	}
	return true // a network error, or no coordinator found: ask again
}

func (s *saramaSession) fetchCommitted(cl sarama.Client, byTopic map[string][]int32, starts map[topicPart]int64) error {
	group := s.lookupConfig.GroupID
	coordinator, err := cl.Coordinator(group)
	if err != nil {
		return err
	}
	resp, err := coordinator.FetchOffset(sarama.NewOffsetFetchRequest(cl.Config().Version, group, byTopic))
	if err != nil {
		_ = cl.RefreshCoordinator(group)
		return err
	}
	if resp.Err != sarama.ErrNoError {
		if errors.Is(resp.Err, sarama.ErrNotCoordinatorForConsumer) {
			_ = cl.RefreshCoordinator(group)
		}
		return resp.Err
	}
	for topic, partitions := range byTopic {
		for _, p := range partitions {
			block := resp.GetBlock(topic, p)
			if block == nil {
				return sarama.ErrIncompleteResponse
			}
			if block.Err != sarama.ErrNoError {
				return block.Err
			}
			if block.Offset >= 0 {
				starts[topicPart{topic, p}] = block.Offset
			}
		}
	}
	return nil
}

// poll is one poll: [[topic, partition, offset, value], ...]. A poll that fails returned
// nothing, so consumed nothing: definite. Errors beside records are poll_errors.
func (s *saramaSession) poll(timeoutMs int64) (any, *opError) {
	records, err := s.pollOnce(timeoutMs)
	if err != nil {
		return nil, err
	}
	if len(records) > 0 && !s.transactional {
		s.commitAsync()
	}
	return records, nil
}

// pollOnce waits up to the timeout for a first record from any assigned partition,
// then takes what else has arrived, up to maxPollRecords.
func (s *saramaSession) pollOnce(timeoutMs int64) ([]any, *opError) {
	if s.consumer == nil {
		return nil, &opError{"ErrNotAssigned", "poll before assign", howDefinite, false}
	}
	s.noteFetchErrors()
	tps, cases := s.messageCases()
	records := []any{}
	timer := time.NewTimer(ms(timeoutMs))
	defer timer.Stop()
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timer.C)})
	for len(records) < maxPollRecords {
		chosen, value, ok := reflect.Select(cases)
		if chosen == len(tps) { // the time is up, or (drained) nothing more has arrived
			break
		}
		if !ok { // the partition's consumer gave up (its errors say why): started again by the next assign
			cases[chosen].Chan = reflect.Value{}
			s.dropDead(tps[chosen])
			continue
		}
		records = append(records, s.took(value.Interface().(*sarama.ConsumerMessage)))
		if len(records) == 1 { // after the first, only what is there already
			cases[len(tps)] = reflect.SelectCase{Dir: reflect.SelectDefault}
		}
	}
	return records, nil
}

func (s *saramaSession) messageCases() ([]topicPart, []reflect.SelectCase) {
	var tps []topicPart
	var cases []reflect.SelectCase
	for tp, pc := range s.partitions {
		tps = append(tps, tp)
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(pc.Messages())})
	}
	return tps, cases
}

func (s *saramaSession) took(m *sarama.ConsumerMessage) []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.positions[topicPart{m.Topic, m.Partition}] = m.Offset + 1
	return []any{m.Topic, m.Partition, m.Offset, string(m.Value)}
}

// dropDead forgets a partition consumer that closed itself: the partition is no longer
// assigned as far as the history's positions go.
func (s *saramaSession) dropDead(tp topicPart) {
	delete(s.partitions, tp)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.assigned, tp)
	delete(s.positions, tp)
}

// noteFetchErrors: the partition consumers' errors since the last poll, as poll_errors.
func (s *saramaSession) noteFetchErrors() {
	for _, pc := range s.partitions {
		for more := true; more; {
			select {
			case e, ok := <-pc.Errors():
				if !ok {
					more = false
					continue
				}
				s.noteAsyncError(e.Err)
			default:
				more = false
			}
		}
	}
}

// commitAsync commits the positions in the background, as a member of no group
// (generation -1); a failure is a poll_error.
func (s *saramaSession) commitAsync() {
	cl, group := s.consumerClient, s.consumerConfig.GroupID
	req := sarama.NewOffsetCommitRequest(cl.Config(), group)
	for tp, offset := range s.knownOffsets() {
		req.AddBlockWithLeaderEpoch(tp.Topic, tp.Partition, offset, -1, 0, "")
	}
	go func() {
		if err := commitOffsets(cl, group, req); err != nil {
			s.noteAsyncError(err)
		}
	}()
}

func commitOffsets(cl sarama.Client, group string, req *sarama.OffsetCommitRequest) error {
	coordinator, err := cl.Coordinator(group)
	if err != nil {
		return err
	}
	resp, err := coordinator.CommitOffset(req)
	if err != nil {
		_ = cl.RefreshCoordinator(group)
		return err
	}
	for _, partitions := range resp.Errors {
		for _, kerr := range partitions {
			if kerr != sarama.ErrNoError {
				return kerr
			}
		}
	}
	return nil
}

// rewind moves the consumer back to `to` (a transaction's first polled offsets).
func (s *saramaSession) rewind(to map[topicPart]int64) {
	for tp, offset := range to {
		if _, err := s.startAt(tp, offset); err != nil {
			s.noteAsyncError(err) // the next assign starts it again
			s.dropDead(tp)
			continue
		}
		s.mu.Lock()
		s.positions[tp] = offset
		s.mu.Unlock()
	}
}
