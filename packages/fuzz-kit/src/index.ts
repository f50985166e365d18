export { describeFuzzTargets, type SuiteRunner } from './describe-suite.js'
export { type FuzzFinding, type FuzzResult, type FuzzTarget, fuzz } from './harness.js'
export { mutatedJson, mutatedText, token } from './mutate.js'
export { fuzzReport, fuzzSettings, fuzzTimeoutMs, runTarget } from './suite.js'
