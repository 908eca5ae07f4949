// kafkajs's clients from the configurations workloads/kafkajs_client/config.py writes:
// a producer (idempotent, or transactional), and the cluster an assigned consumer
// fetches through. kafkajs logs to stdout by default, which is this program's reply
// channel: its log goes to stderr (the harness's log) instead.
'use strict'

const { Kafka, logLevel } = require('kafkajs')
const Cluster = require('kafkajs/src/cluster')
const { createLogger } = require('kafkajs/src/loggers')
const socketFactory = require('kafkajs/src/network/socketFactory')
const ISOLATION_LEVEL = require('kafkajs/src/protocol/isolationLevel')

// LOGTRIAL_KAFKAJS_DEBUG=1: kafkajs's debug log (every request) to stderr
const LEVEL = process.env.LOGTRIAL_KAFKAJS_DEBUG ? logLevel.DEBUG : logLevel.WARN

const toStderr = () => ({ namespace, level, label, log }) => {
  const { message, ...extra } = log
  process.stderr.write(`${new Date().toISOString()} ${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
}

// each record names its partition (the workload's key), as the other clients' do
const byRecord = () => ({ message }) => message.partition

function kafka(config) {
  return new Kafka({
    brokers: config.brokers,
    clientId: config.client_id,
    requestTimeout: config.request_timeout_ms,
    connectionTimeout: config.connection_timeout_ms,
    retry: config.retry,
    logLevel: LEVEL,
    logCreator: toStderr,
  })
}

function producer(config) {
  const options = {
    createPartitioner: byRecord,
    idempotent: config.idempotent,
    maxInFlightRequests: config.max_in_flight,
    allowAutoTopicCreation: false,
  }
  if (config.transactional_id) {
    options.transactionalId = config.transactional_id
    options.transactionTimeout = config.transaction_timeout_ms
  }
  if (config.retries != null) options.retry = { retries: config.retries }
  return kafka(config).producer(options)
}

// consumerCluster: kafkajs's cluster layer (connections, metadata, the protocol's
// requests) for a consumer of assigned partitions, which kafkajs's own consumer (a
// group member only) cannot be (assigned_consumer.js)
function consumerCluster(config) {
  return new Cluster({
    logger: createLogger({ level: LEVEL, logCreator: toStderr }),
    socketFactory: socketFactory(),
    brokers: config.brokers,
    clientId: config.client_id,
    connectionTimeout: config.connection_timeout_ms,
    requestTimeout: config.request_timeout_ms,
    enforceRequestTimeout: true,
    retry: config.retry,
    allowAutoTopicCreation: false,
    isolationLevel: config.read_committed ? ISOLATION_LEVEL.READ_COMMITTED : ISOLATION_LEVEL.READ_UNCOMMITTED,
  })
}

module.exports = { producer, consumerCluster, ISOLATION_LEVEL }
