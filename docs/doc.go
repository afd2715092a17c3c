// Package docs holds accelstack's manual as markdown pages, linked from the
// README. It has no Go code of its own: its test checks that every relative
// link in README.md and the pages points at a file and heading that exist.
package docs
