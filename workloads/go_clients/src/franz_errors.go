package main

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kgo's own errors, by the name the error table knows them by
// (workloads/franz_go_client/errors.py). Checked before Kafka's: ErrRecordTimeout
// wraps the last broker error it saw, and the timeout is what decides.
var kgoErrors = []struct {
	err  error
	name string
}{
	{kgo.ErrRecordTimeout, "ErrRecordTimeout"},
	{kgo.ErrRecordRetries, "ErrRecordRetries"},
	{kgo.ErrMaxBuffered, "ErrMaxBuffered"},
	{kgo.ErrAborting, "ErrAborting"},
	{kgo.ErrClientClosed, "ErrClientClosed"},
	{context.DeadlineExceeded, "context.DeadlineExceeded"},
	{context.Canceled, "context.Canceled"},
	{io.EOF, "io.EOF"},
	{io.ErrUnexpectedEOF, "io.ErrUnexpectedEOF"},
}

// franzErrName is the name the history records: kgo's sentinel, else Kafka's error
// code name (kerr's, e.g. NOT_LEADER_FOR_PARTITION), else the error's Go type.
func franzErrName(err error) string {
	for _, known := range kgoErrors {
		if errors.Is(err, known.err) {
			return known.name
		}
	}
	if ke, ok := errors.AsType[*kerr.Error](err); ok {
		return ke.Message
	}
	if _, ok := errors.AsType[*kgo.ErrFirstReadEOF](err); ok {
		return "ErrFirstReadEOF"
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return "net.OpError"
	}
	return typeName(err, "kgo.Error") // untyped: not in the table, so indefinite
}

func franzTableError(err error) *opError {
	return &opError{franzErrName(err), err.Error(), howTable, false}
}
