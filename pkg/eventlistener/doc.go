// Package eventlistener is the controller of EventListeners and
// WorkflowTriggers (tensorstack.dev/v1beta1).
//
// For each EventListener it keeps a Deployment and a Service, both named
// <listener>-eventlistener-<5 hex digits of its UID>, running
// `workflow-events listen` (package server) behind port 80, with the URLs
// of the WorkflowTriggers that name the listener as its subscribers. Its
// status gives the Service's in-cluster URL, the external URL when the
// controller knows the ingress host, and a Ready condition from the
// Deployment's availability.
//
// For each WorkflowTrigger it keeps a Deployment and a Service named
// <trigger>-workflowtrigger-<5 hex digits>, running `workflow-events
// trigger` as the trigger's service account, which creates the runs. Its
// Ready condition is False while a listener it names does not exist or its
// spec is invalid (ValidateTrigger), and otherwise follows the Deployment.
//
// The Deployments and Services are owned by their listener or trigger and
// labelled with WorkflowEventsLabelKey; the controllers watch them through
// a cache of their own restricted to that label.
package eventlistener
