// Package llm talks to language models for the chat agent.
//
// A conversation is kept as Anthropic-style content blocks ([Message], [Block]):
// text, tool_use and tool_result. That is also the stored format (the messages
// table holds each message's blocks as a JSON array), so a loaded conversation
// can be sent back to any model without loss.
//
// A [Provider] streams one model response for a [Request] as a sequence of
// [Event] values: text deltas, tool calls (announced when they start, delivered
// whole when their input is complete), token usage, and a final Done with the
// stop reason. Providers exist for the Anthropic Messages API ([NewAnthropic])
// and for OpenAI-compatible Chat Completions servers ([NewOpenAI]: OpenAI,
// Ollama, vLLM, llama.cpp, LM Studio), both built on the official SDKs;
// package llmtest has a deterministic scripted provider for tests.
//
// Every failure a provider reports is an [*Error] with a [Code], a Retryable
// flag and a message that is safe to show to users (it never contains keys).
//
// Retries: the SDKs' own retries are switched off by default
// ([Options.MaxRetries] is 0). A streamed response cannot be retried once
// output has reached the user, and the SDKs would otherwise wait out any
// Retry-After silently (the Anthropic SDK with no upper bound) while the chat
// shows nothing. The agent loop owns the policy instead, as the tool registry
// does for tools: it sees [Error.Retryable] and [Error.RetryAfter] and can
// retry a request that failed before any event was produced.
//
// Timeouts: there is deliberately no overall deadline on a response (a long
// answer may legitimately stream for minutes; the caller's context bounds it).
// Instead [Options.IdleTimeout] limits the silence between two reads of the
// response, from sending the request to the last byte, and a stalled server
// fails with [CodeTimeout].
package llm
