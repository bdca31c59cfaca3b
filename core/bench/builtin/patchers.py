"""Built-in patchers: the reference set plus two for the embedded platform's objects.

Names follow the reference (Theodolite) so that existing benchmark definitions work.
Implementations live in ``bench.patchers``; this module only registers them.
"""

from __future__ import annotations

import dataclasses

from bench.api import PatcherType, Registrar
from bench.hookspecs import hookimpl
from bench.patchers import configmap, env, executor, generic, meta, replicas, resources

_DECORATED = ("factor", "prefix", "suffix")
#: the properties each patcher reads (bench.patchers), the reference's names
PROPERTIES: dict[str, tuple[str, ...]] = {
    "ReplicaPatcher": (),
    "ExecutorCoresPatcher": ("container", "factor"),
    "ExecutorMemoryPatcher": ("container", "factor"),
    "NumSensorsLoadGeneratorReplicaPatcher": ("loadGenMaxRecords",),
    "NumNestedGroupsLoadGeneratorReplicaPatcher": ("loadGenMaxRecords", "numSensors"),
    "DataVolumeLoadGeneratorReplicaPatcher": ("maxVolume", "container", "variableName"),
    "EnvVarPatcher": ("container", "variableName", "isInitContainer", *_DECORATED),
    "ResourceLimitPatcher": ("container", "limitedResource", "resource", "variableName", "format", "factor"),
    "ResourceRequestPatcher": ("container", "requestedResource", "resource", "variableName", "format", "factor"),
    "ConfigMapYamlPatcher": ("fileName", "variableName", *_DECORATED),
    "ConfigMapPropertiesPatcher": ("fileName", "variableName", *_DECORATED),
    "LabelPatcher": ("labelName", "variableName", "label"),
    "MatchLabelPatcher": ("labelName", "variableName", "label"),
    "TemplateLabelPatcher": ("labelName", "variableName", "label"),
    "ServiceSelectorPatcher": ("labelName", "variableName", "label"),
    "NamePatcher": (),
    "ImagePatcher": ("container", "pullPolicy"),
    "NodeSelectorPatcher": ("nodeLabelName", "variableName"),
    "VolumesConfigMapPatcher": ("volumeName",),
    "SchedulerNamePatcher": (),
    "GenericResourcePatcher": ("path", "type", *_DECORATED),
    "GeneratorLoadPatcher": ("maxPerInstance",),
    "ParamPatcher": ("key", "variableName", "type", *_DECORATED),
}

_PATCHERS = (
    PatcherType(
        "ReplicaPatcher",
        "spec.replicas = value (SparkApplication: spec.executor.instances)",
        replicas.replica_patcher,
    ),
    PatcherType(
        "ExecutorCoresPatcher",
        "cores per SUT instance = value (BenchSut spec.coresPerInstance; SparkApplication "
        "spec.executor.cores; a worker command's --cores)",
        executor.cores_per_instance_patcher,
    ),
    PatcherType(
        "ExecutorMemoryPatcher",
        "memory per SUT instance = value MiB (x factor) (BenchSut spec.memoryPerInstanceMb; "
        "SparkApplication spec.executor.memory; a worker command's --memory)",
        executor.memory_per_instance_patcher,
    ),
    PatcherType(
        "NumSensorsLoadGeneratorReplicaPatcher",
        "generator replicas = ceil(load / loadGenMaxRecords), default 150000 (BenchGenerator: sensors = load)",
        replicas.num_sensors_patcher,
    ),
    PatcherType(
        "NumNestedGroupsLoadGeneratorReplicaPatcher",
        "generator replicas = ceil(numSensors^load / loadGenMaxRecords), numSensors default 4 "
        "(BenchGenerator: sensors = numSensors^load)",
        replicas.num_nested_groups_patcher,
    ),
    PatcherType(
        "DataVolumeLoadGeneratorReplicaPatcher",
        "replicas = ceil(load / maxVolume); env variableName of container = load // replicas",
        replicas.data_volume_patcher,
    ),
    PatcherType(
        "EnvVarPatcher",
        "env variableName of container (isInitContainer: an init container) = prefix + value*factor + suffix "
        "(BenchGenerator: NUM_SENSORS sets its sensors)",
        env.env_var_patcher,
    ),
    PatcherType(
        "ResourceLimitPatcher",
        "resources.limits[limitedResource] of container = value*factor + format",
        resources.resource_limit_patcher,
    ),
    PatcherType(
        "ResourceRequestPatcher",
        "resources.requests[requestedResource] of container = value*factor + format",
        resources.resource_request_patcher,
    ),
    PatcherType(
        "ConfigMapYamlPatcher",
        "key variableName of the YAML file fileName in a ConfigMap = prefix + value*factor + suffix",
        configmap.config_map_yaml_patcher,
    ),
    PatcherType(
        "ConfigMapPropertiesPatcher",
        "key variableName of the properties file fileName in a ConfigMap = prefix + value*factor + suffix",
        configmap.config_map_properties_patcher,
    ),
    PatcherType("LabelPatcher", "metadata.labels[labelName (or variableName)] = value", meta.label_patcher),
    PatcherType(
        "MatchLabelPatcher", "spec.selector.matchLabels[labelName (or variableName)] = value",
        meta.match_label_patcher
    ),
    PatcherType(
        "TemplateLabelPatcher",
        "spec.template.metadata.labels[labelName (or variableName)] = value",
        meta.template_label_patcher,
    ),
    PatcherType(
        "ServiceSelectorPatcher", "Service spec.selector[labelName (or label)] = value",
        meta.service_selector_patcher
    ),
    PatcherType("NamePatcher", "metadata.name = value", meta.name_patcher),
    PatcherType("ImagePatcher", "image of container = value (imagePullPolicy = pullPolicy when given)",
                meta.image_patcher),
    PatcherType("NodeSelectorPatcher", "pod nodeSelector[nodeLabelName (or variableName)] = value",
                meta.node_selector_patcher),
    PatcherType("VolumesConfigMapPatcher", "pod volumes mounting ConfigMap volumeName mount ConfigMap value",
                meta.volumes_config_map_patcher),
    PatcherType("SchedulerNamePatcher", "pod schedulerName = value", meta.scheduler_name_patcher),
    PatcherType(
        "GenericResourcePatcher",
        "any field by path (a/b/0/c or a.b.0.c) = prefix + value*factor + suffix, converted to type "
        "int|integer|float|number|string|bool|boolean",
        generic.generic_resource_patcher,
    ),
    PatcherType(
        "GeneratorLoadPatcher",
        "BenchGenerator: spec.sensors = load, spec.replicas = ceil(load / maxPerInstance)",
        replicas.generator_load_patcher,
    ),
    PatcherType(
        "ParamPatcher",
        "spec.params[key] = value*factor (type int|float|string|bool; embedded SUT parameters)",
        generic.param_patcher,
    ),
)

PATCHERS = tuple(dataclasses.replace(p, properties=PROPERTIES.get(p.name)) for p in _PATCHERS)


@hookimpl
def bench_register_patchers(register: Registrar) -> None:
    for patcher in PATCHERS:
        register(patcher)
