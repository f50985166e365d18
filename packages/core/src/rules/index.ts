export { decide } from './decide.js'
export { deriveFacts, type FactExtras } from './derive-facts.js'
export { decisionsToTrace, explainedSettings, explainSetting, traceFor } from './explain.js'
