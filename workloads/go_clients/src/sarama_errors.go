package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Sarama's own errors, by the name the error table knows them by
// (workloads/go_clients/sarama_errors.py): the name of its sentinel. Checked before
// Kafka's: ErrTxnOffsetCommit and ErrAddPartitionsToTxn wrap the broker errors that made
// them give up, and the sentinel is what says where.
var saramaSentinels = []struct {
	err  error
	name string
}{
	{sarama.ErrOutOfBrokers, "ErrOutOfBrokers"},
	{sarama.ErrBrokerNotFound, "ErrBrokerNotFound"},
	{sarama.ErrClosedClient, "ErrClosedClient"},
	{sarama.ErrIncompleteResponse, "ErrIncompleteResponse"},
	{sarama.ErrInvalidPartition, "ErrInvalidPartition"},
	{sarama.ErrAlreadyConnected, "ErrAlreadyConnected"},
	{sarama.ErrNotConnected, "ErrNotConnected"},
	{sarama.ErrInsufficientData, "ErrInsufficientData"},
	{sarama.ErrShuttingDown, "ErrShuttingDown"},
	{sarama.ErrMessageTooLarge, "ErrMessageTooLarge"},
	{sarama.ErrDecompressedBatchTooLarge, "ErrDecompressedBatchTooLarge"},
	{sarama.ErrConsumerOffsetNotAdvanced, "ErrConsumerOffsetNotAdvanced"},
	{sarama.ErrConsumerRetriesExhausted, "ErrConsumerRetriesExhausted"},
	{sarama.ErrAddPartitionsToTxn, "ErrAddPartitionsToTxn"},
	{sarama.ErrTxnOffsetCommit, "ErrTxnOffsetCommit"},
	{sarama.ErrTransactionNotReady, "ErrTransactionNotReady"},
	{sarama.ErrNonTransactedProducer, "ErrNonTransactedProducer"},
	{sarama.ErrTransitionNotAllowed, "ErrTransitionNotAllowed"},
	{sarama.ErrCannotTransitionNilError, "ErrCannotTransitionNilError"},
	{sarama.ErrTxnUnableToParseResponse, "ErrTxnUnableToParseResponse"},
	{sarama.ErrUnknownMessage, "ErrUnknownMessage"},
	{sarama.ErrProducerRetryBufferOverflow, "ErrProducerRetryBufferOverflow"},
	{sarama.ErrClosedConsumerGroup, "ErrClosedConsumerGroup"},
	{context.DeadlineExceeded, "context.DeadlineExceeded"},
	{context.Canceled, "context.Canceled"},
	{io.EOF, "io.EOF"},
	{io.ErrUnexpectedEOF, "io.ErrUnexpectedEOF"},
}

// saramaErrName is the name the history records: Sarama's sentinel, else Kafka's error
// code name (as franz-go's kerr spells it, the same table's names for both Go clients),
// else the error's Go type (sarama.ConfigurationError, net.OpError, ...).
func saramaErrName(err error) string {
	for _, known := range saramaSentinels {
		if errors.Is(err, known.err) {
			return known.name
		}
	}
	if ke, ok := errors.AsType[sarama.KError](err); ok {
		return kafkaErrorName(int16(ke))
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return "net.OpError"
	}
	return typeName(err, "sarama.Error")
}

// kafkaErrorName: Kafka's name for an error code (NOT_LEADER_FOR_PARTITION).
func kafkaErrorName(code int16) string {
	if ke, ok := errors.AsType[*kerr.Error](kerr.ErrorForCode(code)); ok {
		return ke.Message
	}
	return fmt.Sprintf("KAFKA_ERROR_%d", code)
}

func saramaTableError(err error) *opError {
	return &opError{saramaErrName(err), err.Error(), howTable, false}
}
