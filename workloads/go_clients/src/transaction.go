package main

// txnSteps is what a client does at each step of a transaction (franz_transaction.go,
// sarama_transaction.go); runTxn is the order of the steps, the same for every client.
type txnSteps interface {
	begin() *opError
	pollOnce(timeoutMs int64) ([]any, *opError)
	sendAll(records []outRecord) ([]int64, *opError)
	commit(firstPolled map[topicPart]int64) *opError
	// abort: a definite failure named `name` if the abort succeeded, else indefinite
	abort(firstPolled map[topicPart]int64, name, message string) *opError
}

// runTxn runs one transaction of micro-ops; the results in order (offsets, or a poll's
// records). As the Java server's: sends are awaited before the commit, the consumer's
// positions are committed with the transaction, an error aborts, and only an abort that
// succeeds is definite.
func runTxn(t txnSteps, mops []microOp, abortOnPurpose bool) (any, *opError) {
	if err := t.begin(); err != nil {
		return nil, err
	}
	firstPolled := map[topicPart]int64{}
	results := make([]any, len(mops))
	var sends []outRecord
	var slots []int
	for i, m := range mops {
		if m.Send != nil {
			sends, slots = append(sends, *m.Send), append(slots, i)
			continue
		}
		polled, err := t.pollOnce(m.PollMs)
		if err != nil {
			return nil, t.abort(firstPolled, err.name, err.message)
		}
		remember(firstPolled, polled)
		results[i] = polled
	}
	// produced after the polls: a poll's failure then leaves nothing in flight to abort
	offsets, err := t.sendAll(sends)
	if err != nil {
		return nil, t.abort(firstPolled, err.name, err.message)
	}
	for k, slot := range slots {
		results[slot] = offsets[k]
	}
	if abortOnPurpose {
		return nil, t.abort(firstPolled, "ABORTED_ON_PURPOSE", "aborted on purpose (--abort-p)")
	}
	if err := t.commit(firstPolled); err != nil {
		return nil, err
	}
	return results, nil
}

// remember keeps the first offset a transaction polled on each partition (where an
// abort rewinds the consumer to).
func remember(first map[topicPart]int64, polled []any) {
	for _, r := range polled {
		rec := r.([]any)
		tp, offset := topicPart{rec[0].(string), rec[1].(int32)}, rec[2].(int64)
		if seen, ok := first[tp]; !ok || offset < seen {
			first[tp] = offset
		}
	}
}
