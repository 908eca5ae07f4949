package main

// warm makes now what the session's first ops would make on first use: the producer
// (Sarama's constructors connect and fetch metadata; a transactional one gets its
// producer id), the consumer, and the lookup with the group's coordinator found (an
// offset fetch for `tps`). Nothing is sent, assigned or committed.
func (s *saramaSession) warm(tps []topicPart) *opError {
	if oerr := s.producerReady(); oerr != nil {
		return oerr
	}
	_, err := s.assignedConsumer()
	if err == nil {
		_, err = s.committedStarts(tps)
	}
	if err != nil {
		return &opError{saramaErrName(err), err.Error(), howDefinite, false}
	}
	return nil
}
