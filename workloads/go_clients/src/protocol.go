package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// request is every command's fields; each command reads the ones it takes.
type request struct {
	ID              int64           `json:"id"`
	Session         int64           `json:"session"`
	Cmd             string          `json:"cmd"`
	Producer        producerConfig  `json:"producer"`
	Consumer        consumerConfig  `json:"consumer"`
	Lookup          lookupConfig    `json:"lookup"`
	AutoOffsetReset string          `json:"auto_offset_reset"`
	OpTimeoutMs     int64           `json:"op_timeout_ms"`
	Partitions      []topicPart     `json:"partitions"`
	FromBeginning   bool            `json:"from_beginning"`
	Topics          []string        `json:"topics"`
	Records         []outRecord     `json:"records"`
	Mops            []microOp       `json:"mops"`
	Abort           bool            `json:"abort"`
	Commit          bool            `json:"commit"`   // timed_txn: commit (else abort)
	WaitMs          int64           `json:"wait_ms"`  // timed_txn: how long its sends are awaited
	RetryMs         int64           `json:"retry_ms"` // timed_txn: how long a failed end is tried again
	TimeoutMs       int64           `json:"timeout_ms"`
	Value           json.RawMessage `json:"value"`
}

type topicPart struct {
	Topic     string
	Partition int32
}

// UnmarshalJSON reads [topic, partition].
func (tp *topicPart) UnmarshalJSON(b []byte) error {
	var pair []any
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("a partition is [topic, partition], not %s", b)
	}
	tp.Topic, _ = pair[0].(string)
	n, _ := pair[1].(float64)
	tp.Partition = int32(n)
	return nil
}

// outRecord is [topic, partition, key, value].
type outRecord struct {
	topicPart
	Key, Value string
}

func (r *outRecord) UnmarshalJSON(b []byte) error {
	var parts []any
	if err := json.Unmarshal(b, &parts); err != nil || len(parts) != 4 {
		return fmt.Errorf("a record is [topic, partition, key, value], not %s", b)
	}
	r.Topic, _ = parts[0].(string)
	n, _ := parts[1].(float64)
	r.Partition = int32(n)
	r.Key, r.Value = fmt.Sprint(parts[2]), fmt.Sprint(parts[3])
	return nil
}

// microOp is ["send", topic, partition, key, value] or ["poll", timeout_ms].
type microOp struct {
	Send   *outRecord
	PollMs int64
}

func (m *microOp) UnmarshalJSON(b []byte) error {
	var parts []json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil || len(parts) == 0 {
		return fmt.Errorf("not a micro-op: %s", b)
	}
	var kind string
	json.Unmarshal(parts[0], &kind)
	switch {
	case kind == "send" && len(parts) == 5:
		rest, _ := json.Marshal(parts[1:])
		m.Send = &outRecord{}
		return m.Send.UnmarshalJSON(rest)
	case kind == "poll" && len(parts) == 2:
		return json.Unmarshal(parts[1], &m.PollMs)
	}
	return fmt.Errorf("not a micro-op: %s", b)
}

// How an operation ended when it did not end ok: who decides fail or info.
const (
	howTable      = "table"      // Python's error table, by name
	howDefinite   = "definite"   // certainly did not take effect
	howIndefinite = "indefinite" // a commit or abort whose outcome is unknown
)

type opError struct {
	name, message, how string
	retire             bool
}

// typeName: the Go type of the innermost error that has a type of its own; `untyped`
// for an error without one.
func typeName(err error, untyped string) string {
	name := strings.TrimPrefix(fmt.Sprintf("%T", err), "*")
	switch name {
	case "errors.errorString", "fmt.wrapError", "fmt.wrapErrors", "errors.joinError":
		if inner := unwrapFirst(err); inner != nil {
			return typeName(inner, untyped)
		}
		return untyped
	}
	return name
}

func unwrapFirst(err error) error {
	switch e := err.(type) {
	case interface{ Unwrap() error }:
		return e.Unwrap()
	case interface{ Unwrap() []error }:
		if inner := e.Unwrap(); len(inner) > 0 {
			return inner[0]
		}
	}
	return nil
}
