// Package guardrails is DeerFlow's pre-tool-call authorization: every
// tool call is described as a [Request] (the tool's name and input, the
// agent's passport, the thread, run and tool-call ids, the user, their role
// and whether a subagent is calling) and given to a [Provider], whose
// [Decision] allows the call or denies it with OAP reason codes. A denied
// call never runs: the model reads DeerFlow's "Guardrail denied: ..." error
// result and chooses another way. A provider that fails (an error, a crash,
// a timeout, a decision that cannot be read) blocks the call unless the
// guard fails open (DeerFlow's fail_closed, true by default).
//
// The providers are Go values found by the use string of
// guardrails.provider in config.yaml, in a [Registry] the embedding
// program passes by value (DefaultRegistry holds Antler's own):
//
//   - deerflow.guardrails.builtin:AllowlistProvider, DeerFlow's allowlist
//     and denylist of tool names ([AllowlistProvider]);
//   - antler:command, a command given the request as JSON on stdin that
//     prints the decision as JSON on stdout ([CommandProvider]);
//   - antler:http, a policy service the request is POSTed to, answering an
//     OAP decision as APort-style services do ([HTTPProvider]).
//
// [Guard.ToolMiddleware] evaluates calls inside the agent loop;
// [Guard.Check] evaluates one call anywhere else (`antler tools call`).
package guardrails
