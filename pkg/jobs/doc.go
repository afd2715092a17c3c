// Package jobs holds the T9k job controllers (batch.tensorstack.dev): a
// framework shared by every job kind and one package per kind.
package jobs
