// One logical process's clients, made on first use, as the Java server's Session: a
// producer (idempotent, or transactional) and a consumer of assigned partitions.
'use strict'

const { producer } = require('./clients')
const { AssignedConsumer, keyOf } = require('./assigned_consumer')
const { errName, tableError } = require('./errors')
const { HOW, OpError, within } = require('./protocol')
const { runTxn } = require('./transaction')
const { timedTxn } = require('./timed')

const ACKS = { all: -1, '-1': -1, 1: 1, 0: 0 }
const ONE_CALL = process.env.LOGTRIAL_KAFKAJS_SEND === 'batch'

// byTopic: [topic, partition, key, value] records as sendBatch's topicMessages
function byTopic(records) {
  const messages = new Map()
  for (const [topic, partition, key, value] of records) {
    if (!messages.has(topic)) messages.set(topic, [])
    messages.get(topic).push({ partition, key, value })
  }
  return [...messages].map(([topic, list]) => ({ topic, messages: list }))
}

// byPartition: one topicMessages entry per partition
function byPartition(records) {
  const entries = new Map()
  for (const [topic, partition, key, value] of records) {
    const k = keyOf(topic, partition)
    if (!entries.has(k)) entries.set(k, { topic, messages: [] })
    entries.get(k).messages.push({ partition, key, value })
  }
  return [...entries.values()]
}

class Session {
  constructor(req) {
    this.producerConfig = req.producer
    this.consumerConfig = req.consumer
    this.transactional = Boolean(req.producer.transactional_id)
    this.opTimeoutMs = req.op_timeout_ms
    this.producer = null
    this.consumer = null
    this.asyncErrors = []
  }

  run(req) {
    switch (req.cmd) {
      case 'assign': return this.assign(req.partitions, req.from_beginning)
      case 'warm': return this.warm(req.partitions)
      case 'subscribe': // refused before a run starts (ClientKind.refuses); here for a caller that did not ask
        throw new OpError('UnsupportedOperation', 'kafkajs has no consumer that polls as a group member', HOW.definite)
      case 'send': return this.send(req.records)
      case 'poll': return this.poll(req.timeout_ms)
      case 'txn': return runTxn(this, req.mops, req.abort)
      case 'timed_txn': return timedTxn(this, req.records, req.wait_ms, req.commit, req.retry_ms)
      case 'close': return this.close()
    }
    throw new OpError('UnknownCommand', String(req.cmd), HOW.table)
  }

  // connected: the producer, connected (and its producer id fetched, when idempotent);
  // a failure here sent no record: definite
  async connectedProducer() {
    if (!this.producer) {
      const p = producer(this.producerConfig)
      try {
        await within(this.opTimeoutMs, p.connect(), 'OP_TIMEOUT', 'the producer did not connect in time')
      } catch (e) {
        p.disconnect().catch(() => {})
        const err = tableError(e)
        throw new OpError(err.name, err.message, HOW.definite)
      }
      this.producer = p
    }
    return this.producer
  }

  consumerOf() {
    if (!this.consumer) {
      this.consumer = new AssignedConsumer(this.consumerConfig, {
        groupId: this.consumerConfig.group_id,
        resetToEnd: this.consumerConfig.auto_offset_reset === 'latest',
        opTimeoutMs: this.opTimeoutMs,
        noteError: e => this.asyncErrors.push(errName(e)),
      })
    }
    return this.consumer
  }

  // warm: before the harness's clock starts (harness/client_open.py), the producer
  // connected and the consumer warmed (AssignedConsumer.warm), so no op pays for them.
  // Nothing is sent or assigned: a failure is definite
  async warm(partitions) {
    await this.connectedProducer()
    const tps = partitions.map(([topic, partition]) => ({ topic, partition }))
    try {
      await within(this.opTimeoutMs, this.consumerOf().warm(tps), 'OP_TIMEOUT', 'the consumer did not warm in time')
    } catch (e) {
      const err = e instanceof OpError ? e : tableError(e)
      throw new OpError(err.name, err.message, HOW.definite)
    }
    return null
  }

  // assign: nothing was assigned when it fails: definite
  async assign(partitions, fromBeginning) {
    const tps = partitions.map(([topic, partition]) => ({ topic, partition }))
    try {
      return await this.consumerOf().assign(tps, fromBeginning, this.opTimeoutMs)
    } catch (e) {
      const err = tableError(e)
      throw new OpError(err.name, err.message, HOW.definite)
    }
  }

  // produce: each record's offset, in order: one send per partition, at once, as the
  // other clients produce record by record. kafkajs answers a send with the partition's
  // base offset and writes its records as one batch, in order. One sendBatch for all
  // of an op's partitions (LOGTRIAL_KAFKAJS_SEND=batch) writes duplicates when a
  // request to one broker fails while another's is in flight (docs/findings.md, kafkajs).
  async produce(sender, records) {
    const acks = ACKS[this.producerConfig.acks]
    const timeout = this.producerConfig.request_timeout_ms
    const calls = ONE_CALL ? [byTopic(records)] : byPartition(records).map(topicMessages => [topicMessages])
    const replies = await Promise.all(calls.map(topicMessages => sender.sendBatch({ acks, timeout, topicMessages })))
    const base = new Map(replies.flat().map(r => [keyOf(r.topicName, r.partition), Number(r.baseOffset)]))
    const seen = new Map()
    return records.map(([topic, partition]) => {
      const key = keyOf(topic, partition)
      const index = seen.get(key) || 0
      seen.set(key, index + 1)
      if (!base.has(key) || Number.isNaN(base.get(key))) {
        throw new OpError('NoOffset', `kafkajs acknowledged no offset for ${topic}/${partition}`, HOW.table)
      }
      return base.get(key) + index
    })
  }

  // send: acknowledged in time, or OP_TIMEOUT (the records may still be written)
  async send(records) {
    const p = await this.connectedProducer()
    try {
      return await within(this.opTimeoutMs, this.produce(p, records), 'OP_TIMEOUT', 'no acknowledgement in time')
    } catch (e) {
      throw tableError(e)
    }
  }

  // poll: a poll that fails returned nothing, so consumed nothing: definite. Without
  // a transaction, what it read is committed in the background (enable.auto.commit
  // off, as the other clients' assigned consumers)
  async poll(timeoutMs) {
    const records = await this.pollOnce(timeoutMs)
    if (records.length > 0 && !this.transactional) this.consumer.commitPositions()
    return records
  }

  async pollOnce(timeoutMs) {
    if (!this.consumer || this.consumer.assigned.size === 0) {
      throw new OpError('ErrNotAssigned', 'poll before assign', HOW.definite)
    }
    try {
      return await this.consumer.poll(timeoutMs, this.opTimeoutMs)
    } catch (e) {
      const err = tableError(e)
      throw new OpError(err.name, err.message, HOW.definite)
    }
  }

  // drainExtra adds what the polls since the last reply saw beside their records
  drainExtra(reply) {
    if (this.asyncErrors.length > 0) {
      reply.poll_errors = this.asyncErrors
      this.asyncErrors = []
    }
  }

  // close: the producer and the consumer's connections at once
  async close() {
    const producer = this.producer
    this.producer = null
    if (producer) await producer.disconnect().catch(() => {})
    if (this.consumer) await this.consumer.close()
    this.consumer = null
    return null
  }
}

module.exports = { Session }
