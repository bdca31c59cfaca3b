"""Kubernetes helpers of the kubernetes platform: a generic object client and the
default manifests for the embedded platform's BenchSut/BenchGenerator kinds."""
