// Package gateway is the platform's way in: one HTTP entry in front of
// every web workload (Notebooks, TensorBoards, Explorers, EventListeners,
// MLServices and SimpleMLServices), at the paths and hosts of package
// webroute.
//
// For each request it
//   - routes it (Router): a path of webroute on the gateway's host, or a
//     serving host <service>.<namespace>.<domain>, refusing paths that
//     could escape their prefix;
//   - authenticates it (Authenticator): "Authorization: Bearer" with a
//     Kubernetes token (a TokenReview) or an API key (package apikey);
//     EventListeners need no login, as they check their senders' HMAC or
//     token themselves;
//   - authorizes it (Authorizer): a SubjectAccessReview of get on the
//     workload's proxy subresource in its project namespace, and, for an
//     API key, the key's scope;
//   - finds the workload's Service and access token (Resolver), and
//     proxies it there without buffering, WebSockets included, with the
//     access token as its only credential: the user's Authorization
//     header never reaches a workload.
//
// Decisions and lookups are cached briefly, allow and deny alike, so a
// revoked right or key stops working within the caches' TTL.
package gateway
