// Package genericjob is the GenericJob kind of the jobs engine: replicas of
// free-form types that find each other through the variables the controller
// substitutes in their commands, args and environment, finishing by success
// and failure rules.
package genericjob
