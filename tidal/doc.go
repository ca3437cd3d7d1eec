// Package tidal is a client for the catalogue part of the TIDAL API v2
// (https://openapi.tidal.com/v2, JSON:API): search, albums with their paged
// tracks, and tracks by ISRC.
//
// It authenticates with OAuth2 client credentials (one cached token, refreshed
// before expiry by a single request however many callers need it), resolves
// JSON:API "included" resources into typed values (artists, albums, cover art),
// and paces itself with a token bucket that follows TIDAL's x-ratelimit-*
// headers.
//
// Every failure is an [*Error] whose kind (ErrNotFound, ErrAuthMissing, …)
// errors.Is matches, with TIDAL's status, error code, category and detail.
// The client never retries a 429 or a 5xx itself: callers decide ([Error.Temporary]
// says whether to). The one retry it does make is after a 401, with a fresh
// token.
//
// Supported surface: [NewClient] with its [Config], the typed calls and
// results, and [*Error] with its kinds. Sending and the body cap are
// Toolport's internal client core, shared by all its API clients.
package tidal
