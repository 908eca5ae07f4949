package main

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The clients' settings as workloads/franz_go_client/config.py writes them.
type producerConfig struct {
	Brokers              []string `json:"brokers"`
	ClientID             string   `json:"client_id"`
	Acks                 string   `json:"acks"`
	Idempotent           bool     `json:"idempotent"`
	TransactionalID      string   `json:"transactional_id"`
	GroupID              string   `json:"-"` // the consumer's: whose offsets a transaction commits
	DeliveryTimeoutMs    int64    `json:"delivery_timeout_ms"`
	RequestTimeoutMs     int64    `json:"request_timeout_ms"`
	TransactionTimeoutMs int64    `json:"transaction_timeout_ms"`
	Retries              *int     `json:"retries"`
	MaxInFlight          *int     `json:"max_in_flight"`
}

type consumerConfig struct {
	Brokers             []string `json:"brokers"`
	ClientID            string   `json:"client_id"`
	GroupID             string   `json:"group_id"`
	ReadCommitted       bool     `json:"read_committed"`
	AutoOffsetReset     string   `json:"auto_offset_reset"`
	EnableAutoCommit    bool     `json:"enable_auto_commit"`
	SessionTimeoutMs    int64    `json:"session_timeout_ms"`
	HeartbeatIntervalMs int64    `json:"heartbeat_interval_ms"`
	FetchMaxWaitMs      int64    `json:"fetch_max_wait_ms"`
}

type lookupConfig struct {
	Brokers  []string `json:"brokers"`
	ClientID string   `json:"client_id"`
	GroupID  string   `json:"group_id"`
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func producerOpts(c producerConfig, logger kgo.Logger) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...), kgo.ClientID(c.ClientID), kgo.WithLogger(logger),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), // each record names its partition
		kgo.ProducerLinger(0),
		kgo.RecordDeliveryTimeout(ms(c.DeliveryTimeoutMs)),
		kgo.ProduceRequestTimeout(ms(c.RequestTimeoutMs)),
	}
	switch c.Acks {
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	default:
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
		if !c.Idempotent && c.TransactionalID == "" {
			opts = append(opts, kgo.DisableIdempotentWrite())
		}
	}
	if c.Retries != nil {
		opts = append(opts, kgo.RecordRetries(*c.Retries))
	}
	if c.MaxInFlight != nil {
		opts = append(opts, kgo.MaxProduceRequestsInflightPerBroker(*c.MaxInFlight))
	}
	if c.TransactionalID != "" {
		// the group is never joined (no topics): it only names whose offsets the
		// transaction commits (transaction.go)
		opts = append(opts, kgo.TransactionalID(c.TransactionalID),
			kgo.TransactionTimeout(ms(c.TransactionTimeoutMs)), kgo.ConsumerGroup(c.GroupID))
	}
	return opts
}

// consumerOpts: the options both kinds of consumer take; a group consumer adds groupOpts.
func consumerOpts(c consumerConfig) []kgo.Opt {
	level, reset := kgo.ReadUncommitted(), kgo.NewOffset().AtStart()
	if c.ReadCommitted {
		level = kgo.ReadCommitted()
	}
	if c.AutoOffsetReset == "latest" { // where an offset out of range resets to
		reset = kgo.NewOffset().AtEnd()
	}
	return []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...), kgo.ClientID(c.ClientID), kgo.FetchIsolationLevel(level),
		kgo.ConsumeResetOffset(reset), kgo.FetchMaxWait(ms(c.FetchMaxWaitMs)),
		// the raw OffsetCommit an assigned consumer sends names topics, which v10 replaced by ids
		kgo.MaxVersions(maxOffsetCommit(9)),
	}
}

func maxOffsetCommit(v int16) *kversion.Versions {
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(int16(kmsg.OffsetCommit), v)
	return versions
}

func groupOpts(c consumerConfig) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.ConsumerGroup(c.GroupID), kgo.SessionTimeout(ms(c.SessionTimeoutMs)),
		kgo.HeartbeatInterval(ms(c.HeartbeatIntervalMs)), kgo.BlockRebalanceOnPoll(),
	}
	if !c.EnableAutoCommit {
		opts = append(opts, kgo.DisableAutoCommit())
	}
	return opts
}

func lookupOpts(c lookupConfig) []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(c.Brokers...), kgo.ClientID(c.ClientID)}
}
