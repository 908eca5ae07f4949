// timed_txn: one transaction whose steps are timed, for the late-batch probe
// (harness/probes/late_batch_java.py, which asks the Java server and the Go program
// the same): its sends, awaited at most `waitMs`, then a commit or an abort, tried again
// after a request timeout until `retryMs` have passed. Times are epoch milliseconds.
'use strict'

const { errName, tableError } = require('./errors')
const { sleep } = require('./protocol')

const RETRIED = 'KafkaJSRequestTimeoutError'

async function timedTxn(session, records, waitMs, commit, retryMs) {
  const producer = await session.connectedProducer()
  const out = { begun: Date.now() }
  let txn
  try {
    txn = await producer.transaction()
  } catch (e) {
    throw tableError(e)
  }
  const sends = records.map(() => ({}))
  const sending = records.map((record, i) => session.produce(txn, [record]).then(
    ([offset]) => Object.assign(sends[i], { at: Date.now(), offset }),
    e => Object.assign(sends[i], { at: Date.now(), error: errName(e) })))
  await Promise.race([Promise.all(sending), sleep(waitMs)]) // unresolved: the send goes on
  out.waited = Date.now()
  out.ends = await end(txn, commit, retryMs)
  out.sends = sends.map(seen => ({ ...seen }))
  return out
}

// end: [[outcome, started, ended], ...], one per try
async function end(txn, commit, retryMs) {
  const ends = []
  const firstTry = Date.now()
  for (;;) {
    const started = Date.now()
    let outcome = 'ok'
    try {
      await (commit ? txn.commit() : txn.abort())
    } catch (e) {
      outcome = errName(e)
    }
    const ended = Date.now()
    ends.push([outcome, started, ended])
    if (outcome !== RETRIED || ended - firstTry >= retryMs) return ends
  }
}

module.exports = { timedTxn }
