// The name the history records for an error kafkajs raised, which the error table
// (workloads/kafkajs_client/errors.py) judges: Kafka's error type as kafkajs spells it
// (NOT_LEADER_FOR_PARTITION, GROUP_COORDINATOR_NOT_AVAILABLE), else kafkajs's own
// error class (KafkaJSRequestTimeoutError, KafkaJSNumberOfRetriesExceeded, ...).
'use strict'

const { OpError, HOW } = require('./protocol')

// kafkajs wraps what its retrier gives up on: a non-retriable error in
// KafkaJSNonRetriableError (its cause decides), retries that ran out in
// KafkaJSNumberOfRetriesExceeded (which decides itself: an earlier attempt may have
// been written whatever the last one said).
function innermost(err) {
  let e = err
  while (e && e.name === 'KafkaJSNonRetriableError' && e.cause && e.cause !== e) e = e.cause
  return e
}

function errName(err) {
  const e = innermost(err)
  if (!e) return 'UnknownError'
  if (e.name === 'KafkaJSNumberOfRetriesExceeded') return e.name
  if (typeof e.type === 'string' && /^[A-Z_]+$/.test(e.type)) return e.type // a protocol error
  if (e.code && typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) return 'KafkaJSConnectionError' // a socket's
  return e.name || 'Error'
}

function describe(err) {
  const e = innermost(err)
  return e && e !== err ? `${err.message} (caused by ${e.name}: ${e.message})` : `${err && err.message}`
}

// tableError: the error as the table will judge it
function tableError(err) {
  if (err instanceof OpError) return err
  return new OpError(errName(err), describe(err), HOW.table)
}

module.exports = { errName, describe, tableError }
