// logtrial's kafkajs sessions over stdin/stdout, one JSON object a line, speaking the
// protocol of the Java client's server (workloads/java_client/src/logtrial/Server.java):
// request {"id", "session", "cmd", ...}; reply {"id", "ok": value} or {"id", "error":
// [name, message], "how", "retire"}. Each session's requests run in order (a promise
// chain of its own); replies interleave across sessions (workloads/bridge/process.py
// matches them by id).
'use strict'

const readline = require('readline')
const { Session } = require('./session')
const { OpError, HOW } = require('./protocol')

// what the ready line tells the harness (test.json's versions)
function versions() {
  return { kafkajs: require('kafkajs/package.json').version, node: process.version }
}

function reply(message) {
  let line
  try {
    line = JSON.stringify(message)
  } catch (e) {
    line = JSON.stringify({ id: message.id, error: ['CLIENT_CRASH', String(e)], how: HOW.table, retire: true })
  }
  process.stdout.write(line + '\n')
}

class Server {
  constructor() {
    this.sessions = new Map() // session id -> { session, chain }
  }

  enqueue(req) {
    let entry = this.sessions.get(req.session)
    if (!entry) {
      entry = { session: null, chain: Promise.resolve() }
      this.sessions.set(req.session, entry)
    }
    entry.chain = entry.chain.then(() => this.serve(entry, req))
    if (req.cmd === 'close') this.sessions.delete(req.session)
  }

  async serve(entry, req) {
    const message = { id: req.id }
    try {
      message.ok = await this.handle(entry, req)
      if (message.ok === undefined) message.ok = null
    } catch (e) {
      // an OpError is the session's verdict; anything else is a bug here or in kafkajs
      const err = e instanceof OpError ? e : new OpError('CLIENT_CRASH', `${e && e.stack}`, HOW.table, true)
      Object.assign(message, { error: [err.name, err.message], how: err.how, retire: err.retire })
    }
    if (entry.session) entry.session.drainExtra(message)
    reply(message)
  }

  async handle(entry, req) {
    if (req.cmd === 'open') {
      entry.session = new Session(req)
      return null
    }
    if (req.cmd === 'echo') return req.value
    if (!entry.session) throw new OpError('CLIENT_CRASH', 'no open session', HOW.table, true)
    return entry.session.run(req)
  }
}

function main() {
  const server = new Server()
  reply({ id: -1, ok: versions() }) // ready
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  input.on('line', line => {
    let req
    try {
      req = JSON.parse(line)
    } catch (e) {
      process.stderr.write(`not a request: ${e.message}\n`)
      return
    }
    server.enqueue(req)
  })
  input.on('close', () => process.exit(0)) // stdin closed: the harness is done (or gone)
}

main()
