// Package xgboost is the XGBoostTrainingJob kind of the jobs engine: a
// master, whose tracker the workers join, and workers, given the environment
// the Kubeflow training operator sets.
package xgboost
