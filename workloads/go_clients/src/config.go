package main

import "time"

// The clients' settings as workloads/go_clients/config.py writes them, the same for
// every Go client: each turns them into its own options (franz_config.go, sarama_config.go).
type producerConfig struct {
	Brokers              []string `json:"brokers"`
	ClientID             string   `json:"client_id"`
	KafkaVersion         string   `json:"kafka_version"` // the cluster's: Sarama's Config.Version
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
	KafkaVersion        string   `json:"kafka_version"`
	GroupID             string   `json:"group_id"`
	ReadCommitted       bool     `json:"read_committed"`
	AutoOffsetReset     string   `json:"auto_offset_reset"`
	EnableAutoCommit    bool     `json:"enable_auto_commit"`
	SessionTimeoutMs    int64    `json:"session_timeout_ms"`
	HeartbeatIntervalMs int64    `json:"heartbeat_interval_ms"`
	FetchMaxWaitMs      int64    `json:"fetch_max_wait_ms"`
}

type lookupConfig struct {
	Brokers      []string `json:"brokers"`
	ClientID     string   `json:"client_id"`
	KafkaVersion string   `json:"kafka_version"`
	GroupID      string   `json:"group_id"`
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
