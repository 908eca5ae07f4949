package main

// warm makes now what the session's first ops would make on first use: the producer and
// the consumer, each connected to a broker, and the lookup with the group's coordinator
// found (an offset fetch for `tps`). Nothing is sent, assigned or committed. A
// transactional producer still inits on its first transaction (kgo does it there).
func (s *franzSession) warm(tps []topicPart) *opError {
	producer, oerr := s.producerClient()
	if oerr != nil {
		return oerr
	}
	ctx, cancel := s.opContext()
	defer cancel()
	err := producer.Ping(ctx)
	if err == nil {
		consumer, cerr := s.assignedConsumer()
		if err = cerr; err == nil {
			err = consumer.Ping(ctx)
		}
	}
	if err == nil {
		_, err = s.committedStarts(tps)
	}
	if err != nil {
		return &opError{franzErrName(err), err.Error(), howDefinite, false}
	}
	return nil
}
