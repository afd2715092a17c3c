package jobs

import (
	"testing"
)

// TestJobs runs every case against one control plane, in parallel.
func TestJobs(t *testing.T) {
	e := startEnv(t)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"pytorch/lifecycle", testPyTorchLifecycle},
		{"restart/exitcode", testExitCodeTable},
		{"restart/backofflimit", testBackoffLimitShared},
		{"restart/policies", testPolicies},
		{"restart/genericlimit", testGenericRestartLimit},
		{"restart/disruptions", testDisruptions},
		{"restart/nodegone", testNodeGone},
		{"restart/interrupted", testInterruptedRestart},
		{"deadline", testDeadline},
		{"runmode/debug", testDebugMode},
		{"runmode/pauseresume", testPauseResume},
		{"runmode/pausedfromstart", testPausedFromStart},
		{"runmode/staleaddress", testStaleAddress},
		{"cleanup/generic", testCleanUpPolicies},
		{"cleanup/training", testTrainingCleanUp},
		{"genericjob/substitution", testSubstitution},
		{"genericjob/finishrules", testFinishRules},
		{"pytorch/elastic", testElastic},
		{"scheduler/podgroup", testPodGroup},
		{"ascend", testAscend},
		{"ascendjob/env", testAscendJobEnv},
		{"ascendjob/restart", testAscendJobRestart},
		{"ascendjob/scheduler", testAscendJobScheduler},
		{"ascendjob/ranktable", testAscendJobRankTable},
		{"ascendjob/refused", testAscendJobRefused},
		{"ascendjob/seed", testAscendJobSeed},
		{"validation/refused", testRefused},
		{"validation/pastwebhook", testInvalidPastWebhook},
		{"validation/toolarge", testTooLarge},
		{"tensorflow", testTensorFlow},
		{"xgboost", testXGBoost},
		{"seed", testSeedManifests},
		{"api/defaults", testDefaults},
		{"scheduler/podnametaken", testPodNameTaken},
		{"quota/podsrefused", testQuota},
		{"mpijob/seedlayout", testMPIJobSeedLayout},
		{"mpijob/replicaspecs", testMPIJobReplicaSpecs},
		{"mpijob/refused", testMPIJobRefused},
		{"mpijob/seedfields", testMPIJobSeedFields},
		{"deepspeed", testDeepSpeedJob},
		{"deepspeed/refused", testDeepSpeedRefused},
		{"colossalai/seedlayout", testColossalAISeedLayout},
		{"colossalai/replicaspecs", testColossalAIReplicaSpecs},
		{"colossalai/refused", testColossalAIRefused},
		{"beam/succeeded", testBeamJobSucceeded},
		{"beam/failed", testBeamJobFailed},
		{"beam/refused", testBeamJobRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, e)
		})
	}
}
