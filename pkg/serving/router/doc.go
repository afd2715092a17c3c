// Package router is the router of an MLService (cmd/serving-router): a
// reverse proxy that serves the MLService's global URL, splitting its
// requests between the default and canary releases by weight (or sending
// them to the transformer), and each release's own URL. It tells the URLs
// apart by the first label of the Host header.
//
// A release with a logger has each request and response sent as a
// CloudEvent (binary mode, request and response sharing one id) to every
// logger URL. Events go through a bounded queue per URL with workers of its
// own, so that a slow or hanging sink never delays a response: when a
// queue is full its events are dropped and counted.
//
// What it serves, the Config the MLService controller writes, is package
// routerconfig.
package router
