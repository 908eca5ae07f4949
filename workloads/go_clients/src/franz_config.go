package main

import (
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// franz-go's options from the shared settings (config.go).
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
	// an idempotent producer keeps 5 in flight per broker on its own, and refuses the
	// option ("invalid usage of MaxProduceRequestsInflightPerBroker with idempotency
	// enabled"): franz_go_gaps lets only 5 through with idempotence
	if c.MaxInFlight != nil && !c.Idempotent && c.TransactionalID == "" {
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
