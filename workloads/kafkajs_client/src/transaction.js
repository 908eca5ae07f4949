// One transaction of micro-ops; the results in order (offsets, or a poll's records).
// As the Java server's: the polls first, then the sends, awaited before the commit; the
// consumer's positions go into the transaction (sendOffsets); an error aborts, and only
// an abort that succeeds is definite. kafkajs cannot end a transaction whose EndTxn
// failed (its state machine stays committing or aborting), so such a session retires.
'use strict'

const { keyOf } = require('./assigned_consumer')
const { tableError } = require('./errors')
const { HOW, OpError, within } = require('./protocol')

async function runTxn(session, mops, abortOnPurpose) {
  const producer = await session.connectedProducer()
  let txn
  try {
    txn = await within(session.opTimeoutMs, producer.transaction(), 'OP_TIMEOUT', 'the transaction did not begin in time')
  } catch (e) { // InitProducerId (first time) or the state machine refused: nothing was written
    const err = tableError(e)
    throw new OpError(err.name, err.message, HOW.definite, true)
  }
  const firstPolled = new Map()
  const results = new Array(mops.length)
  const sends = []
  const slots = []
  for (const [i, mop] of mops.entries()) {
    if (mop[0] === 'send') {
      sends.push(mop.slice(1))
      slots.push(i)
      continue
    }
    let polled
    try {
      polled = await session.pollOnce(mop[1])
    } catch (e) {
      return abort(session, txn, firstPolled, e)
    }
    remember(firstPolled, polled)
    results[i] = polled
  }
  // produced after the polls: a poll's failure then leaves nothing in flight to abort
  try {
    const offsets = await within(session.opTimeoutMs, session.produce(txn, sends), 'OP_TIMEOUT',
      'no acknowledgement in time')
    slots.forEach((slot, k) => { results[slot] = offsets[k] })
  } catch (e) {
    return abort(session, txn, firstPolled, tableError(e))
  }
  if (abortOnPurpose) {
    return abort(session, txn, firstPolled, new OpError('ABORTED_ON_PURPOSE', 'aborted on purpose (--abort-p)', HOW.definite))
  }
  try {
    await addOffsets(session, txn)
  } catch (e) { // EndTxn was not sent: the transaction can still be aborted
    return abort(session, txn, firstPolled, tableError(e))
  }
  await commit(session, txn)
  return results
}

function remember(first, polled) {
  for (const [topic, partition, offset] of polled) {
    const key = keyOf(topic, partition)
    if (!first.has(key) || offset < first.get(key)) first.set(key, offset)
  }
}

// addOffsets: the consumer's positions into the transaction (AddOffsetsToTxn, then
// TxnOffsetCommit to the group's coordinator). kafkajs retries the second, not the first
// (a CONCURRENT_TRANSACTIONS right after the previous transaction ended fails it).
async function addOffsets(session, txn) {
  const topics = session.consumer ? session.consumer.positionTopics() : []
  if (topics.length === 0) return
  await within(session.opTimeoutMs, txn.sendOffsets({ consumerGroupId: session.consumerConfig.group_id, topics }),
    'OP_TIMEOUT', 'the offsets did not join the transaction in time')
}

// commit: EndTxn. A failure leaves the outcome unknown (an EndTxn that timed out may
// have been written), and kafkajs cannot go on with this producer (its state machine
// stays in committing): retire it.
async function commit(session, txn) {
  try {
    await within(session.opTimeoutMs, txn.commit(), 'OP_TIMEOUT', 'the commit did not end in time')
  } catch (e) {
    const err = tableError(e)
    throw new OpError(err.name, `${err.message} (during commit)`, HOW.indefinite, true)
  }
}

// abort: success makes the op a definite failure under the cause's name, and rewinds
// the consumer to the first offset the transaction polled on each partition; a failed
// abort is indefinite, and retires the session as a failed commit does
async function abort(session, txn, firstPolled, cause) {
  const why = cause instanceof OpError ? cause : tableError(cause)
  try {
    await within(session.opTimeoutMs, txn.abort(), 'OP_TIMEOUT', 'the abort did not end in time')
  } catch (e) {
    const err = tableError(e)
    throw new OpError(err.name, `${err.message} (during abort, after ${why.name})`, HOW.indefinite, true)
  }
  if (session.consumer) session.consumer.rewind(firstPolled)
  throw new OpError(why.name, why.message, HOW.definite)
}

module.exports = { runTxn }
