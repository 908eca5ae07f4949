// How an operation ended when it did not end ok, and who decides fail or info.
'use strict'

const HOW = {
  table: 'table', // Python's error table, by name (workloads/kafkajs_client/errors.py)
  definite: 'definite', // certainly did not take effect
  indefinite: 'indefinite', // a commit or abort whose outcome is unknown
}

class OpError extends Error {
  constructor(name, message, how, retire = false) {
    super(message)
    this.name = name
    this.how = how
    this.retire = retire
  }
}

// deliverWithin: deliver(the call's result), or OpError `name` once `ms` has passed;
// whichever comes first decides, so a result that comes too late is never delivered
// (the call itself goes on: kafkajs's calls cannot be cancelled)
function deliverWithin(ms, call, deliver, name, message) {
  return new Promise((resolve, reject) => {
    let open = true
    let timer = null
    const decide = settle => {
      if (!open) return
      open = false
      clearTimeout(timer)
      settle()
    }
    timer = setTimeout(() => decide(() => reject(new OpError(name, message, HOW.table))), ms)
    call.then(value => decide(() => {
      try {
        resolve(deliver(value))
      } catch (e) {
        reject(e)
      }
    }), e => decide(() => reject(e)))
  })
}

// within: the call's result, or OpError `name` once `ms` has passed
const within = (ms, call, name, message) => deliverWithin(ms, call, value => value, name, message)

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

module.exports = { HOW, OpError, within, deliverWithin, sleep }
