package main

import (
	"time"

	"github.com/IBM/sarama"
)

// Sarama's configurations from the shared settings (config.go), with the same timeouts
// as franz-go's and the Java client's.

// saramaVersion: the cluster's version as Sarama's Config.Version, as its users set it:
// Sarama picks each request's version from it (then capped by the broker's
// ApiVersions). 3.0.0, the oldest cluster logtrial runs, when it is not known.
func saramaVersion(v string) sarama.KafkaVersion {
	parsed, err := sarama.ParseKafkaVersion(v)
	switch {
	case err != nil || !parsed.IsAtLeast(sarama.V3_0_0_0):
		return sarama.V3_0_0_0
	case parsed.IsAtLeast(sarama.MaxVersion):
		return sarama.MaxVersion
	}
	return parsed
}

func saramaBase(clientID, version string) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = clientID
	cfg.Version = saramaVersion(version)
	cfg.Metadata.AllowAutoTopicCreation = false // the harness creates its topics
	cfg.Net.DialTimeout = 5 * time.Second
	return cfg
}

// saramaRetryBackoff: between a failed produce and its retry; retries go on for about
// the delivery timeout, as the other clients' do.
const saramaRetryBackoff = 100 * time.Millisecond

func saramaProducerConfig(c producerConfig) *sarama.Config {
	cfg := saramaBase(c.ClientID, c.KafkaVersion)
	cfg.Producer.Partitioner = sarama.NewManualPartitioner // each record names its partition
	cfg.Producer.Return.Successes = true
	cfg.Producer.Timeout = ms(c.RequestTimeoutMs)              // the broker's wait for acks
	cfg.Net.ReadTimeout = ms(c.RequestTimeoutMs) + time.Second // the client's, past the broker's
	cfg.Producer.Retry.Backoff = saramaRetryBackoff
	cfg.Producer.Retry.Max = int(ms(c.DeliveryTimeoutMs) / saramaRetryBackoff)
	if c.Retries != nil {
		cfg.Producer.Retry.Max = *c.Retries
	}
	switch c.Acks {
	case "0":
		cfg.Producer.RequiredAcks = sarama.NoResponse
	case "1":
		cfg.Producer.RequiredAcks = sarama.WaitForLocal
	default:
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		cfg.Producer.Idempotent = c.Idempotent || c.TransactionalID != ""
	}
	if cfg.Producer.Idempotent {
		cfg.Net.MaxOpenRequests = 1 // Sarama's idempotent producer refuses more (config.Validate)
	} else if c.MaxInFlight != nil {
		cfg.Net.MaxOpenRequests = *c.MaxInFlight
	}
	if c.TransactionalID != "" {
		cfg.Producer.Transaction.ID = c.TransactionalID
		cfg.Producer.Transaction.Timeout = ms(c.TransactionTimeoutMs)
	}
	return cfg
}

func saramaConsumerConfig(c consumerConfig) *sarama.Config {
	cfg := saramaBase(c.ClientID, c.KafkaVersion)
	if c.ReadCommitted {
		cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	cfg.Consumer.MaxWaitTime = ms(c.FetchMaxWaitMs)
	cfg.Consumer.Return.Errors = true                   // fetch errors become poll_errors
	cfg.Consumer.Retry.Backoff = 250 * time.Millisecond // not 2 s: faults heal within seconds
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	if c.AutoOffsetReset == "latest" {
		cfg.Consumer.Offsets.Initial = sarama.OffsetNewest
	}
	cfg.Consumer.Offsets.AutoCommit.Enable = c.EnableAutoCommit
	cfg.Consumer.Group.Session.Timeout = ms(c.SessionTimeoutMs)
	cfg.Consumer.Group.Heartbeat.Interval = ms(c.HeartbeatIntervalMs)
	return cfg
}

func saramaLookupConfig(c lookupConfig) *sarama.Config {
	return saramaBase(c.ClientID, c.KafkaVersion)
}
