// A consumer of assigned partitions (no group membership), as Java's assign(): kafkajs's
// consumer is a group member only, so this one is made of kafkajs's own parts below
// it: the cluster (connections, metadata, leaders), the broker's Fetch, ListOffsets,
// OffsetFetch and OffsetCommit requests, and the consumer's Batch, which drops
// control records and, read_committed, aborted transactions' records as kafkajs's
// consumer does. Positions are the harness's: where each partition's next poll starts.
'use strict'

const Batch = require('kafkajs/src/consumer/batch')
const { staleMetadata } = require('kafkajs/src/protocol/error')
const { consumerCluster } = require('./clients')
const { deliverWithin, sleep } = require('./protocol')

const MAX_BYTES_PER_PARTITION = 1024 * 1024
const LOOKUP_RETRY_MS = 100

const keyOf = (topic, partition) => `${topic}\u0000${partition}`

function byTopic(tps) {
  const out = new Map()
  for (const { topic, partition } of tps) {
    if (!out.has(topic)) out.set(topic, [])
    out.get(topic).push(partition)
  }
  return out
}

class AssignedConsumer {
  constructor(config, { groupId, resetToEnd, opTimeoutMs, noteError }) {
    this.config = config
    this.groupId = groupId
    this.resetToEnd = resetToEnd
    this.opTimeoutMs = opTimeoutMs
    this.noteError = noteError // (error) -> the next reply's poll_errors
    this.cluster = null
    this.assigned = new Map() // key -> {topic, partition}
    this.positions = new Map() // key -> the next offset its poll returns (unknown: absent)
  }

  async connected() {
    if (!this.cluster) {
      this.cluster = consumerCluster(this.config)
      await this.cluster.connect()
    }
    return this.cluster
  }

  // warm: connected, with the partitions' metadata and the group's coordinator found
  // (an offset fetch): what the first assign would do on first use, assigning nothing
  async warm(tps) {
    const cluster = await this.connected()
    await cluster.addMultipleTargetTopics([...new Set(tps.map(tp => tp.topic))])
    await this.committed(tps)
  }

  // assign keeps the position of every partition it keeps; the new ones start at the
  // group's committed offset (else the beginning, or the end). Returns the starts it
  // can name: [[topic, partition, start], ...], the history's `starts`. An assign past
  // `opTimeoutMs` is OP_TIMEOUT and changes nothing, even when its lookup ends later.
  async assign(tps, fromBeginning, opTimeoutMs) {
    return deliverWithin(opTimeoutMs, this.startsOf(tps, fromBeginning), starts => this.place(tps, starts),
      'OP_TIMEOUT', 'the assignment did not complete in time')
  }

  // startsOf: where each new partition starts (by key; absent: at the end, looked up later)
  async startsOf(tps, fromBeginning) {
    const cluster = await this.connected()
    await cluster.addMultipleTargetTopics([...new Set(tps.map(tp => tp.topic))])
    const fresh = tps.filter(tp => !this.assigned.has(keyOf(tp.topic, tp.partition)))
    const committed = fromBeginning ? new Map() : await this.committed(fresh)
    const starts = new Map()
    for (const tp of fresh) {
      const key = keyOf(tp.topic, tp.partition)
      if (committed.has(key)) starts.set(key, committed.get(key))
      else if (fromBeginning || !this.resetToEnd) starts.set(key, 0)
    }
    return starts
  }

  place(tps, starts) {
    const wanted = new Map(tps.map(tp => [keyOf(tp.topic, tp.partition), tp]))
    for (const key of this.positions.keys()) if (!wanted.has(key)) this.positions.delete(key)
    for (const key of wanted.keys()) {
      if (this.assigned.has(key)) continue // kept where it was
      if (starts.has(key)) this.positions.set(key, starts.get(key))
      else this.positions.delete(key)
    }
    this.assigned = wanted
    return [...wanted.entries()].filter(([key]) => this.positions.has(key))
      .map(([key, tp]) => [tp.topic, tp.partition, this.positions.get(key)])
  }

  // committed: the group's committed offsets (partitions without one left out), asked
  // of its coordinator until the op's time is up while it is loading or moving, as the
  // Java client's committed() does; read uncommitted, never stable-only
  async committed(tps) {
    const out = new Map()
    if (tps.length === 0) return out
    const topics = [...byTopic(tps)].map(([topic, partitions]) =>
      ({ topic, partitions: partitions.map(partition => ({ partition })) }))
    const until = Date.now() + this.opTimeoutMs
    for (;;) {
      try {
        const coordinator = await this.cluster.findGroupCoordinator({ groupId: this.groupId })
        const { responses } = await coordinator.offsetFetch({ groupId: this.groupId, topics })
        for (const { topic, partitions } of responses) {
          for (const { partition, offset } of partitions) {
            if (Number(offset) >= 0) out.set(keyOf(topic, partition), Number(offset))
          }
        }
        return out
      } catch (e) {
        if (!e.retriable || Date.now() + LOOKUP_RETRY_MS > until) throw e
        await sleep(LOOKUP_RETRY_MS)
      }
    }
  }

  // poll: one fetch from each leader of the assigned partitions, records
  // [[topic, partition, offset, value], ...]; a leader's failure is a poll error and
  // its partitions return nothing this time. Positions move only if the records are
  // delivered: a poll past `opTimeoutMs` is OP_TIMEOUT and what it fetches later is dropped.
  async poll(timeoutMs, opTimeoutMs) {
    await this.connected()
    await this.resolveUnknown()
    return deliverWithin(opTimeoutMs, this.fetchAll(timeoutMs), ({ records, moves }) => {
      for (const [key, offset] of moves) if (this.assigned.has(key)) this.positions.set(key, offset)
      return records
    }, 'OP_TIMEOUT', 'the poll did not end in time')
  }

  async fetchAll(timeoutMs) {
    const maxWaitTime = Math.min(this.config.fetch_max_wait_ms, timeoutMs)
    const requests = [...this.byLeader()].map(([nodeId, topics]) => this.fetchFrom(nodeId, topics, maxWaitTime))
    const records = []
    const moves = new Map()
    for (const result of await Promise.allSettled(requests)) {
      if (result.status === 'rejected') {
        await this.recover(result.reason)
        continue
      }
      records.push(...result.value.records)
      for (const [key, offset] of result.value.moves) moves.set(key, offset)
    }
    return { records, moves }
  }

  byLeader() {
    const out = new Map() // nodeId -> [{topic, partitions: [{partition, fetchOffset, maxBytes}]}]
    const known = [...this.assigned.values()].filter(tp => this.positions.has(keyOf(tp.topic, tp.partition)))
    for (const [topic, partitions] of byTopic(known)) {
      const leaders = this.cluster.findLeaderForPartitions(topic, partitions)
      for (const [nodeId, led] of Object.entries(leaders)) {
        if (!out.has(nodeId)) out.set(nodeId, [])
        out.get(nodeId).push({
          topic,
          partitions: led.map(partition => ({ partition, maxBytes: MAX_BYTES_PER_PARTITION,
            fetchOffset: String(this.positions.get(keyOf(topic, partition))) })),
        })
      }
    }
    return out
  }

  // fetchFrom: one leader's records, and where each partition's next poll starts
  async fetchFrom(nodeId, topics, maxWaitTime) {
    const broker = await this.cluster.findBroker({ nodeId })
    const { responses } = await broker.fetch({ maxWaitTime, minBytes: 1, topics,
      isolationLevel: this.cluster.isolationLevel })
    const records = []
    const moves = new Map()
    for (const { topicName, partitions } of responses) {
      const asked = topics.find(t => t.topic === topicName)
      for (const data of partitions) {
        const { fetchOffset } = asked.partitions.find(p => p.partition === data.partition)
        const batch = new Batch(topicName, fetchOffset, data)
        for (const m of batch.messages) {
          records.push([topicName, data.partition, Number(m.offset), m.value ? m.value.toString() : null])
        }
        if (!batch.isEmptyIncludingFiltered()) moves.set(keyOf(topicName, data.partition), Number(batch.lastOffset()) + 1)
      }
    }
    return { records, moves }
  }

  // recover from a failed fetch as kafkajs's consumer does: fresh metadata for a
  // moved leader, the reset policy for an offset out of range
  async recover(e) {
    this.noteError(e)
    try {
      if (e.name === 'KafkaJSOffsetOutOfRange') {
        await this.reset([{ topic: e.topic, partition: e.partition }])
      } else if (staleMetadata(e) || /Connection|BrokerNotFound|MetadataNotLoaded/.test(e.name)) {
        await this.cluster.refreshMetadata()
      }
    } catch (again) {
      this.noteError(again)
    }
  }

  // resolveUnknown: partitions that start at the end (no committed offset, reset to
  // latest) look their end up once
  async resolveUnknown() {
    const unknown = [...this.assigned.values()].filter(tp => !this.positions.has(keyOf(tp.topic, tp.partition)))
    if (unknown.length > 0) await this.reset(unknown)
  }

  async reset(tps) {
    const topics = [...byTopic(tps)].map(([topic, partitions]) => ({
      topic, fromBeginning: !this.resetToEnd, partitions: partitions.map(partition => ({ partition })),
    }))
    for (const { topic, partitions } of await this.cluster.fetchTopicsOffset(topics)) {
      for (const { partition, offset } of partitions) {
        if (this.assigned.has(keyOf(topic, partition))) this.positions.set(keyOf(topic, partition), Number(offset))
      }
    }
  }

  // the positions of the assigned partitions, as kafkajs's offset commits take them
  positionTopics() {
    const out = new Map()
    for (const [key, tp] of this.assigned) {
      if (!this.positions.has(key)) continue
      if (!out.has(tp.topic)) out.set(tp.topic, [])
      out.get(tp.topic).push({ partition: tp.partition, offset: String(this.positions.get(key)) })
    }
    return [...out].map(([topic, partitions]) => ({ topic, partitions }))
  }

  // commitPositions: as a member of no group (generation -1), in the background; a
  // failure is a poll error
  commitPositions() {
    const topics = this.positionTopics()
    if (topics.length === 0) return
    const commit = async () => {
      const coordinator = await this.cluster.findGroupCoordinator({ groupId: this.groupId })
      await coordinator.offsetCommit({ groupId: this.groupId, groupGenerationId: -1, memberId: '', topics })
    }
    commit().catch(e => this.noteError(e))
  }

  // rewind moves back to `to` (a transaction's first polled offsets, by key)
  rewind(to) {
    for (const [key, offset] of to) if (this.assigned.has(key)) this.positions.set(key, offset)
  }

  async close() {
    if (this.cluster) await this.cluster.disconnect().catch(() => {})
    this.cluster = null
  }
}

module.exports = { AssignedConsumer, keyOf }
