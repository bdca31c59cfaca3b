"""No inert setting, by construction: every setting a user can give bench (the inventory
generated from the code, tests/unit/settings_inventory.py) names the test that shows its
effect, or its refusal where it cannot be honoured.

Why: options, keys and properties were accepted and ignored (a threshold option that
dropped SLOs, ``guessStrategy``, ``--set generator.replicas``, ``cpuPerInstance`` on a
cluster). A new setting now fails this test until a test proves it does something.

``PROVEN`` maps a setting to the test node that exercises it: the test must exist and
name the setting (its flag or click parameter, key, property or variable) in its body or
its parametrize, so a mapping cannot point at an unrelated test.
``UNPROVEN`` lists the settings that existed before this inventory and still wait for
such a mapping: it may only shrink (a setting in it that the code no longer has, or that
is also proven, fails the test), and nothing may be added to it to make a new setting pass.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

from tests.unit.settings_inventory import ROOT, inventory

PROVEN = {
    "set:uc4:feedback":
        "plugins/uc4_hierarchical/tests/test_uc4_registry.py::test_with_feedback_every_node_goes_to_its_direct_parent_only",
    "set:calibrated:sessionTimeoutMs":
        "tests/unit/test_settings_calibrated.py::test_capacity_key_cost_mode_session_and_delay_reach_the_sut",
    "set:calibrated:keyCost":
        "tests/unit/test_settings_calibrated.py::test_capacity_key_cost_mode_session_and_delay_reach_the_sut",
    "set:calibrated:soloShare":
        "tests/unit/test_settings_calibrated.py::test_capacity_key_cost_mode_session_and_delay_reach_the_sut",
    "set:calibrated:delayMs":
        "tests/unit/test_settings_calibrated.py::test_capacity_key_cost_mode_session_and_delay_reach_the_sut",
    "set:calibrated:workUs":
        "tests/unit/test_settings_calibrated.py::test_capacity_key_cost_mode_session_and_delay_reach_the_sut",
    "set:calibrated:capacityMode":
        "tests/unit/test_settings_calibrated.py::test_capacity_key_cost_mode_session_and_delay_reach_the_sut",
    "set:calibrated:capacity":
        "tests/unit/test_settings_calibrated.py::test_capacity_key_cost_mode_session_and_delay_reach_the_sut",
    "set:generator uc4-registry:recordTemplate":
        "tests/unit/test_settings_generator.py::test_value_in_w_and_record_template_shape_the_records",
    "set:generator uc4-registry:valueInW":
        "tests/unit/test_settings_generator.py::test_value_in_w_and_record_template_shape_the_records",
    "set:generator uc4-registry:lingerMs":
        "tests/unit/test_settings_generator.py::test_producer_keys_reach_the_kafka_producer",
    "set:generator uc4-registry:compression":
        "tests/unit/test_settings_generator.py::test_producer_keys_reach_the_kafka_producer",
    "set:generator uc4-registry:batchSize":
        "tests/unit/test_settings_generator.py::test_producer_keys_reach_the_kafka_producer",
    "set:generator uc4-registry:acks":
        "tests/unit/test_settings_generator.py::test_producer_keys_reach_the_kafka_producer",
    "set:generator active-power:recordTemplate":
        "tests/unit/test_settings_generator.py::test_value_in_w_and_record_template_shape_the_records",
    "set:generator active-power:valueInW":
        "tests/unit/test_settings_generator.py::test_value_in_w_and_record_template_shape_the_records",
    "set:generator active-power:lingerMs":
        "tests/unit/test_settings_generator.py::test_producer_keys_reach_the_kafka_producer",
    "set:generator active-power:compression":
        "tests/unit/test_settings_generator.py::test_producer_keys_reach_the_kafka_producer",
    "set:generator active-power:batchSize":
        "tests/unit/test_settings_generator.py::test_producer_keys_reach_the_kafka_producer",
    "set:generator active-power:acks":
        "tests/unit/test_settings_generator.py::test_producer_keys_reach_the_kafka_producer",
    "env:BENCH_K8S_KAFKA_SECRET":
        "tests/unit/test_k8s_scale_out.py::test_the_secret_holds_the_settings_and_the_tls_files_at_their_mounted_paths",
    "env:BENCH_KAFKA_CONFIG":
        "tests/unit/test_k8s_scale_out.py::test_every_pod_reads_kafka_security_from_the_secret_and_no_manifest_holds_it",
    "env:BENCH_PLUGINS":
        "tests/unit/test_cli.py::test_allow_list_limits_plugins",
    "env:BENCH_INSTANCE_INDEX":
        "tests/e2e/test_kubernetes.py::test_generator_instances_take_contiguous_key_ranges",
    "env:BENCH_PARAMS":
        "tests/e2e/test_kubernetes.py::test_generator_instances_take_contiguous_key_ranges",
    "env:BENCH_TOPIC":
        "tests/e2e/test_kubernetes.py::test_generator_instances_take_contiguous_key_ranges",
    "env:BENCH_INSTANCES":
        "tests/e2e/test_kubernetes.py::test_generator_instances_take_contiguous_key_ranges",
    "env:BENCH_SENSORS":
        "tests/e2e/test_kubernetes.py::test_generator_instances_take_contiguous_key_ranges",
    "env:BENCH_GROUP":
        "tests/unit/test_k8s_scale_out.py::test_generator_pods_serve_their_rates_for_prometheus",
    "env:BENCH_METRICS_PORT":
        "tests/unit/test_k8s_scale_out.py::test_generator_pods_serve_their_rates_for_prometheus",
    "env:BENCH_KAFKA_OPTIONS":
        "tests/unit/test_job_args.py::test_run_hands_security_and_arguments_to_the_script",
    "slo:latency:repetitionAggregation":
        "tests/unit/test_settings_slos.py::test_latency_threshold_and_aggregations_decide",
    "slo:latency:queryAggregation":
        "tests/unit/test_settings_slos.py::test_latency_threshold_and_aggregations_decide",
    "slo:latency:threshold":
        "tests/unit/test_settings_slos.py::test_latency_threshold_and_aggregations_decide",
    "slo:generic:promQLQuery":
        "tests/unit/test_settings_slos.py::test_generic_sli_names_the_series_judged_and_a_query_of_another_is_refused",
    "slo:generic:sli":
        "tests/unit/test_settings_slos.py::test_generic_sli_names_the_series_judged_and_a_query_of_another_is_refused",
    "slo:dropped records ratio:externalSloChecker":
        "tests/unit/test_settings_slos.py::test_the_external_checker_of_a_reference_slo_decides",
    "slo:dropped records ratio:externalSloUrl":
        "tests/unit/test_settings_slos.py::test_the_external_checker_of_a_reference_slo_decides",
    "slo:dropped records:externalSloChecker":
        "tests/unit/test_settings_slos.py::test_the_external_checker_of_a_reference_slo_decides",
    "slo:dropped records:externalSloUrl":
        "tests/unit/test_settings_slos.py::test_the_external_checker_of_a_reference_slo_decides",
    "slo:lag trend ratio:externalSloChecker":
        "tests/unit/test_settings_slos.py::test_the_external_checker_of_a_reference_slo_decides",
    "slo:lag trend ratio:externalSloUrl":
        "tests/unit/test_settings_slos.py::test_the_external_checker_of_a_reference_slo_decides",
    "slo:lag trend:externalSloChecker":
        "tests/unit/test_settings_slos.py::test_the_external_checker_of_a_reference_slo_decides",
    "slo:lag trend:externalSloUrl":
        "tests/unit/test_settings_slos.py::test_the_external_checker_of_a_reference_slo_decides",
    "slo:dropped records ratio:ratio":
        "tests/unit/test_settings_slos.py::test_dropped_records_ratio_sets_the_bound_relative_to_the_load",
    "slo:dropped records:thresholdFromExpression":
        "tests/unit/test_settings_slos.py::test_dropped_records_threshold_forms_set_the_bound",
    "slo:dropped records:thresholdRelToResources":
        "tests/unit/test_settings_slos.py::test_dropped_records_threshold_forms_set_the_bound",
    "slo:dropped records:thresholdRelToLoad":
        "tests/unit/test_settings_slos.py::test_dropped_records_threshold_forms_set_the_bound",
    "cli:bench validate --benchmark":
        "tests/unit/test_settings_commands.py::test_validate_benchmark_checks_the_execution_against_that_benchmark",
    "cli:bench report --output":
        "tests/unit/test_settings_commands.py::test_report_output_and_confidence_shape_the_page",
    "cli:bench report --confidence":
        "tests/unit/test_settings_commands.py::test_report_output_and_confidence_shape_the_page",
    "cli:bench analyze --confidence":
        "tests/unit/test_settings_commands.py::test_analyze_confidence_sets_the_width_of_the_slope_intervals",
    "cli:bench --version":
        "tests/unit/test_settings_commands.py::test_version_prints_benchs_version",
    "config:Benchmark.useCase":
        "tests/unit/test_reference_files.py::test_reference_benchmarks_of_other_frameworks_are_refused_in_one_line",
    "config:Benchmark.slis":
        "tests/unit/test_reference_files.py::test_an_sli_bench_does_not_sample_is_refused_by_name",
    "config:ResourceSet.files":
        "tests/unit/test_settings_documents.py::test_resource_set_actions_and_files_bench_cannot_honour_are_refused",
    "config:ResourceSet.afterActions":
        "tests/unit/test_settings_documents.py::test_resource_set_actions_and_files_bench_cannot_honour_are_refused",
    "config:ResourceSet.beforeActions":
        "tests/unit/test_reference_files.py::test_what_bench_cannot_do_for_a_use_case_is_refused_by_name",
    "config:Benchmark.infrastructure":
        "tests/unit/test_k8s_config_maps.py::test_an_infrastructure_set_is_refused_without_reading_the_cluster",
    "config:Benchmark.sut":
        "tests/unit/test_k8s_config_maps.py::test_kubernetes_reads_the_set_and_patchers_apply_to_its_manifests",
    "config:ResourceSet.resources":
        "tests/unit/test_k8s_config_maps.py::test_kubernetes_reads_the_set_and_patchers_apply_to_its_manifests",
    "config:ResourceSet.configMaps":
        "tests/unit/test_k8s_config_maps.py::test_kubernetes_reads_the_set_and_patchers_apply_to_its_manifests",
    "config:Execution.benchmark":
        "tests/unit/test_execution_names_use_case.py::test_run_takes_the_use_case_from_the_execution_file",
    "config:SloOverride.properties":
        "tests/unit/test_settings_honoured.py::test_an_execution_naming_one_slo_keeps_the_others",
    "config:SloOverride.name":
        "tests/unit/test_settings_honoured.py::test_an_execution_naming_one_slo_keeps_the_others",
    "config:Execution.slos":
        "tests/unit/test_settings_honoured.py::test_an_execution_naming_one_slo_keeps_the_others",
    "config:TypeDef.direction":
        "tests/unit/test_settings_documents.py::test_benchmark_load_types_and_their_patchers_are_what_a_load_changes",
    "config:TypeDef.patchers":
        "tests/unit/test_settings_documents.py::test_benchmark_load_types_and_their_patchers_are_what_a_load_changes",
    "config:TypeDef.typeName":
        "tests/unit/test_settings_documents.py::test_benchmark_load_types_and_their_patchers_are_what_a_load_changes",
    "config:Benchmark.loadTypes":
        "tests/unit/test_settings_documents.py::test_benchmark_load_types_and_their_patchers_are_what_a_load_changes",
    "config:SloDef.properties":
        "tests/unit/test_settings_documents.py::test_benchmark_default_execution_and_slos_are_the_runs",
    "config:SloDef.sloType":
        "tests/unit/test_settings_documents.py::test_benchmark_default_execution_and_slos_are_the_runs",
    "config:SloDef.name":
        "tests/unit/test_settings_documents.py::test_benchmark_default_execution_and_slos_are_the_runs",
    "config:Benchmark.slos":
        "tests/unit/test_settings_documents.py::test_benchmark_default_execution_and_slos_are_the_runs",
    "config:Benchmark.defaultExecution":
        "tests/unit/test_settings_documents.py::test_benchmark_default_execution_and_slos_are_the_runs",
    "config:Benchmark.name":
        "tests/unit/test_settings_documents.py::test_benchmark_default_execution_and_slos_are_the_runs",
    "config:Execution.params":
        "tests/unit/test_settings_documents.py::test_benchmark_and_execution_params_reach_the_use_case",
    "config:Benchmark.params":
        "tests/unit/test_settings_documents.py::test_benchmark_and_execution_params_reach_the_use_case",
    "config:PatcherRef.properties":
        "tests/unit/test_settings_documents.py::test_config_overrides_patch_the_named_resource",
    "config:PatcherRef.resource":
        "tests/unit/test_settings_documents.py::test_config_overrides_patch_the_named_resource",
    "config:PatcherRef.type":
        "tests/unit/test_settings_documents.py::test_config_overrides_patch_the_named_resource",
    "config:ConfigOverride.value":
        "tests/unit/test_settings_documents.py::test_config_overrides_patch_the_named_resource",
    "config:ConfigOverride.patcher":
        "tests/unit/test_settings_documents.py::test_config_overrides_patch_the_named_resource",
    "config:Execution.configOverrides":
        "tests/unit/test_settings_documents.py::test_config_overrides_patch_the_named_resource",
    "config:ResourceDef.resourceValues":
        "tests/unit/test_settings_documents.py::test_execution_load_and_resources_are_what_is_measured",
    "config:ResourceDef.resourceType":
        "tests/unit/test_settings_documents.py::test_execution_load_and_resources_are_what_is_measured",
    "config:Execution.resources":
        "tests/unit/test_settings_documents.py::test_execution_load_and_resources_are_what_is_measured",
    "config:LoadDef.loadValues":
        "tests/unit/test_settings_documents.py::test_execution_load_and_resources_are_what_is_measured",
    "config:LoadDef.loadType":
        "tests/unit/test_settings_documents.py::test_execution_load_and_resources_are_what_is_measured",
    "config:Execution.load":
        "tests/unit/test_settings_documents.py::test_execution_load_and_resources_are_what_is_measured",
    "env:BENCH_K8S_TRIGGER_SECONDS":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_drivers_spec",
    "env:BENCH_K8S_EXECUTOR_CORES":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_drivers_spec",
    "env:BENCH_K8S_CONNECTOR":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_drivers_spec",
    "set:job:job":
        "tests/unit/test_job_cli.py::test_job_runs_the_job_use_case_with_the_script_and_template",
    "set:job:jobArgs":
        "tests/unit/test_job_args.py::test_arguments_after_the_double_dash_reach_the_run",
    "set:BenchGenerator.sensors":
        "tests/unit/test_settings_use_case_params.py::test_set_generator_sensors_is_refused_as_the_load_patcher_sets_it",
    "set:generator uc4-registry:keyOffset":
        "tests/unit/test_settings_use_case_params.py::test_set_key_offset_is_refused_as_bench_sets_it",
    "set:generator active-power:keyOffset":
        "tests/unit/test_settings_use_case_params.py::test_set_key_offset_is_refused_as_bench_sets_it",
    "set:generator uc4-registry:partitioner":
        "tests/unit/test_generator.py::test_round_robin_partitioning_is_balanced_across_instances",
    "set:generator active-power:partitioner":
        "tests/unit/test_generator.py::test_round_robin_partitioning_is_balanced_across_instances",
    "set:BenchGenerator.periodMs":
        "tests/unit/test_default_executions.py::test_uc4_load_is_a_nesting_level",
    "set:uc3:timeZone":
        "tests/unit/test_uc23_spark.py::test_uc3_sliding_statistics_per_sensor_attribute_and_hopping_window",
    "set:uc3:timeAttribute":
        "tests/unit/test_uc23_spark.py::test_uc3_sliding_statistics_per_sensor_attribute_and_hopping_window",
    "set:uc3:advanceMs":
        "tests/unit/test_uc23_spark.py::test_uc3_sliding_statistics_per_sensor_attribute_and_hopping_window",
    "set:uc3:windowSizeMs":
        "tests/unit/test_uc23_spark.py::test_uc3_sliding_statistics_per_sensor_attribute_and_hopping_window",
    "set:uc3:numOverlappingWindows":
        "plugins/uc3_time_attr/tests/test_uc3_params.py::test_uc3_overlapping_windows_derive_the_advance",
    "set:generator uc4-registry:registryChangeSeed":
        "plugins/uc4_hierarchical/tests/test_uc4_changes.py::test_the_generator_publishes_the_change_sequence",
    "set:generator uc4-registry:registryChangeIntervalMs":
        "plugins/uc4_hierarchical/tests/test_uc4_registry_changes.py::test_only_the_first_instance_changes_the_registry_and_only_when_asked",
    "set:generator uc4-registry:registry":
        "plugins/uc4_hierarchical/tests/test_uc4_plugin.py::test_registry_document_is_a_full_tree_unless_one_is_given",
    "set:generator uc4-registry:childrenPerGroup":
        "plugins/uc4_hierarchical/tests/test_uc4_plugin.py::test_keys_prefer_the_nested_groups_param_over_the_load",
    "set:generator uc4-registry:nestedGroups":
        "plugins/uc4_hierarchical/tests/test_uc4_plugin.py::test_keys_prefer_the_nested_groups_param_over_the_load",
    "set:uc1:path":
        "plugins/uc1_storage/tests/test_uc1.py::test_uc1_logs_one_json_document_per_record",
    "set:uc1:sink":
        "plugins/uc1_storage/tests/test_uc1.py::test_uc1_logs_one_json_document_per_record",
    "patcher:executor:container":
        "tests/unit/test_settings_patchers.py::test_executor_container_names_the_container_the_cores_go_to",
    "patcher:executor:factor":
        "tests/unit/test_resource_types.py::test_memory_patcher_per_kind_in_mib_with_factor",
    "patcher:replicas:maxPerInstance":
        "tests/unit/test_patchers.py::test_generator_load_patcher",
    "patcher:replicas:numSensors":
        "tests/unit/test_reference_patchers.py::test_the_reference_sensor_patchers_change_bench_generator",
    "patcher:replicas:loadGenMaxRecords":
        "tests/unit/test_patchers.py::test_num_sensors_patcher",
    "patcher:resources:format":
        "tests/unit/test_patchers.py::test_resource_patchers",
    "patcher:resources:factor":
        "tests/unit/test_patchers.py::test_resource_patchers",
    "patcher:resources:container":
        "tests/unit/test_patchers.py::test_resource_patchers",
    "patcher:meta:pullPolicy":
        "tests/unit/test_reference_patchers.py::test_image_patcher_sets_the_pull_policy_of_the_named_container",
    "patcher:meta:container":
        "tests/unit/test_reference_patchers.py::test_image_patcher_sets_the_pull_policy_of_the_named_container",
    "patcher:env:isInitContainer":
        "tests/unit/test_reference_patchers.py::test_env_var_patcher_init_containers",
    "patcher:env:container":
        "tests/unit/test_reference_patchers.py::test_env_var_patcher_init_containers",
    "patcher:env:suffix":
        "tests/unit/test_patchers.py::test_env_var_patcher_prefix_suffix_factor",
    "patcher:env:prefix":
        "tests/unit/test_patchers.py::test_env_var_patcher_prefix_suffix_factor",
    "patcher:env:factor":
        "tests/unit/test_patchers.py::test_env_var_patcher_prefix_suffix_factor",
    "patcher:generic:type":
        "tests/unit/test_reference_patchers.py::test_generic_resource_patcher_decorates_then_converts",
    "patcher:common:suffix":
        "tests/unit/test_reference_patchers.py::test_generic_resource_patcher_decorates_then_converts",
    "patcher:common:prefix":
        "tests/unit/test_reference_patchers.py::test_generic_resource_patcher_decorates_then_converts",
    "patcher:common:factor":
        "tests/unit/test_reference_patchers.py::test_generic_resource_patcher_decorates_then_converts",
    "env:BENCH_K8S_SUT_MODE":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_rendered_deployment",
    "env:BENCH_K8S_GENERATOR_METRICS_PORT":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_rendered_deployment",
    "env:BENCH_K8S_SUT_METRICS_PORT":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_rendered_deployment",
    "env:BENCH_K8S_KAFKA_BOOTSTRAP":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_rendered_deployment",
    "env:BENCH_K8S_RUN_AS_USER":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_rendered_deployment",
    "env:BENCH_K8S_DRIVER_MEMORY":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_rendered_deployment",
    "env:BENCH_K8S_EXECUTOR_MEMORY":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_rendered_deployment",
    "env:BENCH_K8S_SPARK_VERSION":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_rendered_deployment",
    "env:BENCH_K8S_SPARK_SERVICE_ACCOUNT":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_rendered_deployment",
    "env:BENCH_K8S_NAMESPACE":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_rendered_deployment",
    "env:BENCH_K8S_IMAGE_PULL_POLICY":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_rendered_deployment",
    "env:BENCH_K8S_IMAGE":
        "tests/unit/test_settings_k8s_environment.py::test_a_kubernetes_variable_changes_the_rendered_deployment",
    "config:Execution.execution":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "config:Execution.load2":
        "tests/unit/test_grid_run.py::test_the_grid_files_and_each_slice_in_the_reference_format",
    "config:StrategyDef.restrictions":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "config:StrategyDef.name":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "config:ExecutionParams.strategy":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "config:ExecutionParams.loadGenerationDelay":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "config:ExecutionParams.afterTeardownDelay":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "config:ExecutionParams.earlySampleInterval":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "config:ExecutionParams.sampleInterval":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "config:ExecutionParams.earlyStop":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "config:ExecutionParams.metric":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "config:ExecutionParams.repetitions":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "config:ExecutionParams.warmup":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "config:ExecutionParams.duration":
        "tests/unit/test_settings_run_options.py::test_an_execution_file_key_reaches_the_run",
    "slo:generic:thresholdFromExpression":
        "tests/unit/test_reference_slos.py::test_thresholds_as_the_reference_computes_them",
    "slo:generic:externalSloChecker":
        "tests/unit/test_reference_slos.py::test_an_unreachable_checker_fails_the_slo_saying_why",
    "slo:generic:externalSloUrl":
        "tests/unit/test_reference_slos.py::test_an_external_checker_gets_the_reference_document_and_decides",
    "slo:generic:thresholdRelToResources":
        "tests/unit/test_slos.py::test_generic_threshold_relative_to_load_and_resources",
    "slo:generic:thresholdRelToRate":
        "tests/unit/test_slos.py::test_generic_threshold_relative_to_load_and_resources",
    "slo:generic:thresholdRelToLoad":
        "tests/unit/test_slos.py::test_generic_threshold_relative_to_load_and_resources",
    "slo:generic:threshold":
        "tests/unit/test_slos.py::test_generic_operators_at_the_edge",
    "slo:generic:operator":
        "tests/unit/test_slos.py::test_generic_operators_at_the_edge",
    "slo:generic:queryAggregation":
        "tests/unit/test_slos.py::test_generic_query_aggregations",
    "slo:dropped-records:repetitionAggregation":
        "tests/unit/test_slos.py::test_dropped_records_repetition_aggregation",
    "slo:dropped-records:maxRatio":
        "tests/unit/test_slos.py::test_dropped_records_max_ratio_property",
    "slo:dropped records:threshold":
        "tests/unit/test_reference_slos.py::test_dropped_records_matches_the_reference_checker",
    "slo:lag trend ratio:ratio":
        "tests/unit/test_reference_slos.py::test_lag_trend_ratio_is_relative_to_the_load_value",
    "slo:lag trend:threshold":
        "tests/unit/test_reference_slos.py::test_lag_trend_matches_the_reference_checker",
    "slo:lag-trend:threshold":
        "tests/unit/test_slos.py::test_lag_trend_threshold_is_strict",
    "slo:lag trend:thresholdFromExpression":
        "tests/unit/test_slos.py::test_lag_trend_takes_the_reference_threshold_forms_with_their_meaning",
    "slo:lag trend:thresholdRelToResources":
        "tests/unit/test_slos.py::test_lag_trend_takes_the_reference_threshold_forms_with_their_meaning",
    "slo:lag trend:thresholdRelToLoad":
        "tests/unit/test_slos.py::test_lag_trend_takes_the_reference_threshold_forms_with_their_meaning",
    "slo:lag-trend:thresholdFromExpression":
        "tests/unit/test_slos.py::test_lag_trend_takes_the_reference_threshold_forms_with_their_meaning",
    "slo:lag-trend:thresholdRelToResources":
        "tests/unit/test_slos.py::test_lag_trend_takes_the_reference_threshold_forms_with_their_meaning",
    "slo:lag-trend:thresholdRelToLoad":
        "tests/unit/test_slos.py::test_lag_trend_takes_the_reference_threshold_forms_with_their_meaning",
    "cli:bench stages --results":
        "tests/e2e/test_stages.py::test_uc2_stage_latencies_add_up_to_the_end_to_end_latency",
    "cli:bench stages --plugin":
        "tests/e2e/test_stages.py::test_uc2_stage_latencies_add_up_to_the_end_to_end_latency",
    "cli:bench run --expect":
        "tests/unit/test_compare.py::test_expect_after_a_run",
    "cli:bench run --retries":
        "tests/unit/test_engine.py::test_a_persistent_fault_makes_the_experiment_an_error_and_the_run_goes_on",
    "cli:bench run --resume":
        "tests/unit/test_engine.py::test_crash_keeps_results_and_resume_continues_at_the_first_unfinished_repetition",
    "cli:bench run --log-format":
        "tests/unit/test_settings_logging.py::test_log_format_json_writes_json_lines",
    "cli:bench run --verbose":
        "tests/unit/test_settings_logging.py::test_verbose_adds_the_debug_lines",
    "cli:bench --verbose":
        "tests/unit/test_validation_errors.py::test_a_platform_error_is_one_line",
    "cli:bench run --namespace":
        "tests/unit/test_settings_run_options.py::test_namespace_reaches_the_kubernetes_manifests",
    "cli:bench run --spark-warmup":
        "tests/unit/test_settings_run_options.py::test_trigger_conf_and_spark_warmup_reach_the_driver",
    "cli:bench run --trigger":
        "tests/unit/test_settings_run_options.py::test_trigger_conf_and_spark_warmup_reach_the_driver",
    "cli:bench run --conf":
        "tests/unit/test_settings_run_options.py::test_trigger_conf_and_spark_warmup_reach_the_driver",
    "cli:bench run --record-template":
        "tests/unit/test_settings_run_options.py::test_job_and_record_template_make_the_job_use_case",
    "cli:bench run --job":
        "tests/unit/test_settings_run_options.py::test_job_and_record_template_make_the_job_use_case",
    "cli:bench run --kafka-config-file":
        "tests/unit/test_settings_run_options.py::test_kafka_config_file_reaches_every_client_and_the_option_wins",
    "cli:bench run --execution":
        "tests/unit/test_settings_run_options.py::test_benchmark_and_execution_files_are_what_runs",
    "cli:bench run --benchmark":
        "tests/unit/test_settings_run_options.py::test_benchmark_and_execution_files_are_what_runs",
    "cli:bench run --kafka-config":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --lower-bound":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --search":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --resource-type":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --load-type":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --resources":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --loads":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --early-sample-interval":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --sample-interval":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --early-stop":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --metric":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --repetitions":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --warmup":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --duration":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --plugin":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --platform":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --metrics-port":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --connector":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --brokers":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --broker":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench run --bootstrap-servers":
        "tests/unit/test_settings_run_options.py::test_a_run_option_reaches_the_run",
    "cli:bench new-plugin --dir":
        "tests/unit/test_plugin_mistakes.py::test_new_plugin_writes_a_package_and_refuses_bad_names_and_full_folders",
    "cli:bench plugins --verbose":
        "tests/unit/test_plugin_mistakes.py::test_plugins_verbose_lists_every_kind_with_its_description",
    "cli:bench run --cost":
        "tests/unit/test_grid_run.py::test_run_expect_compares_a_grid_run_with_a_grid",
    "cli:bench run --load2-type":
        "tests/e2e/test_grid.py::test_the_grid_gives_the_capacity_model_at_every_point",
    "cli:bench run --loads2":
        "tests/e2e/test_grid.py::test_the_grid_gives_the_capacity_model_at_every_point",
    "set:calibrated:keys":
        "tests/unit/test_grid_run.py::test_the_grid_equals_the_capacity_model_at_every_point",
    "env:BENCH_TEST_BOOTSTRAP":
        "tests/e2e/test_new_plugin.py::test_a_new_plugin_installs_passes_its_tests_and_runs_to_a_demand_table",
    "cli:bench analyze --exp":
        "tests/unit/test_analyze.py::test_cli_errors_are_one_line",
    "cli:bench analyze --metric":
        "tests/unit/test_analyze.py::test_capacity_table",
    "cli:bench analyze --output":
        "tests/unit/test_analyze.py::test_cli_threshold_options_set_their_own_form",
    "cli:bench analyze --threshold":
        "tests/unit/test_analyze.py::test_demand_agrees_with_the_reference_algorithm",
    "cli:bench analyze --threshold-rel-to-load":
        "tests/unit/test_analyze.py::test_cli_threshold_options_set_their_own_form",
    "cli:bench analyze --threshold-rel-to-rate":
        "tests/unit/test_analyze.py::test_cli_threshold_options_set_their_own_form",
    "cli:bench analyze --warmup":
        "tests/unit/test_analyze_agrees_with_run.py::test_the_boundary_sample_is_what_decides",
    "cli:bench run --dry-run":
        "tests/unit/test_settings_applied.py::test_kubernetes_slos_on_prometheus_slis_need_its_url",
    "cli:bench run --set":
        "tests/unit/test_settings_applied.py::test_the_generators_instances_follow_max_per_instance",
    "cli:bench run --spark-master":
        "tests/unit/test_settings_applied.py::test_a_cpu_limit_bench_cannot_apply_is_refused",
    "cli:bench run --spark-mode":
        "tests/unit/test_settings_applied.py::test_a_cpu_limit_bench_cannot_apply_is_refused",
    "cli:bench run --threshold":
        "tests/unit/test_settings_honoured.py::test_a_threshold_option_keeps_the_dropped_records",
    "cli:bench run --threshold-rel-to-load":
        "tests/unit/test_settings_honoured.py::test_a_threshold_option_keeps_the_dropped_records",
    "cli:bench run --threshold-rel-to-rate":
        "tests/unit/test_settings_honoured.py::test_a_threshold_option_keeps_the_dropped_records",
    "config:StrategyDef.guessStrategy":
        "tests/unit/test_settings_applied.py::test_strategy_keys_no_strategy_reads_are_refused",
    "config:StrategyDef.searchStrategy":
        "tests/unit/test_settings_applied.py::test_strategy_keys_no_strategy_reads_are_refused",
    "env:BENCH_K8S_PROMETHEUS_URL":
        "tests/unit/test_settings_applied.py::test_kubernetes_slos_on_prometheus_slis_need_its_url",
    "set:BenchGenerator.maxPerInstance":
        "tests/unit/test_settings_applied.py::test_the_generators_instances_follow_max_per_instance",
    "set:BenchGenerator.replicas":
        "tests/unit/test_settings_applied.py::test_a_set_a_patcher_overwrites_is_refused",
    "set:BenchSut.replicas":
        "tests/unit/test_settings_applied.py::test_a_set_a_patcher_overwrites_is_refused",
    "slo:*:warmup":
        "tests/unit/test_settings_honoured.py::test_warmup_seconds_is_the_slo_warmup",
    "slo:*:warmupSeconds":
        "tests/unit/test_settings_honoured.py::test_warmup_seconds_is_the_slo_warmup",
    "slo:generic:repetitionAggregation":
        "tests/unit/test_settlement_aggregations.py::test_a_non_monotone_aggregation_is_never_settled_early",
    "slo:lag-trend:thresholdRelToRate":
        "tests/unit/test_analyze.py::test_a_run_judged_against_records_per_second_is_re_evaluated_so",
    "slo:latency:percentile":
        "tests/unit/test_latency.py::test_the_percentile_names_the_series",
}

UNPROVEN = frozenset({
    "cli:bench run --predict",
    "cli:bench run --results",
    "cli:bench stages --bootstrap-servers",
    "cli:bench stages --drain",
    "cli:bench stages --duration",
    "cli:bench stages --instances",
    "cli:bench stages --sensors",
    "cli:bench stages --set",
    "cli:bench stages --warmup",
    "config:Benchmark.kafkaConfig",
    "config:Benchmark.loadGenerator",
    "config:Benchmark.resourceTypes",
    "config:Benchmark.waitForResourcesEnabled",
    "config:Execution.name",
    "config:KafkaConfig.bootstrapServer",
    "config:KafkaConfig.removeOnly",
    "config:KafkaConfig.topics",
    "config:SloDef.offset",
    "config:SloDef.prometheusUrl",
    "config:SloDef.query",
    "config:SloOverride.offset",
    "config:SloOverride.prometheusUrl",
    "config:SloOverride.query",
    "config:SloOverride.sloType",
    "config:TopicDef.name",
    "config:TopicDef.numPartitions",
    "config:TopicDef.replicationFactor",
    "env:BENCH_BOOTSTRAP_SERVERS",
    "env:BENCH_BROKER_COMMAND",
    "env:BENCH_CHECKPOINT_DIR",
    "env:BENCH_GENERATOR",
    "env:BENCH_INPUT_TOPIC",
    "env:BENCH_JARS_DIR",
    "env:BENCH_K8S_API_URL",
    "env:BENCH_K8S_CONTEXT",
    "env:BENCH_K8S_IN_CLUSTER",
    "env:BENCH_K8S_KAFKA_CLUSTER",
    "env:BENCH_K8S_KUBECONFIG",
    "env:BENCH_K8S_LAG_QUERY",
    "env:BENCH_K8S_SUT_QUERY",
    "env:BENCH_K8S_TOPICS",
    "env:BENCH_K8S_TOPIC_REPLICAS",
    "env:BENCH_KAFKA_HEAP",
    "env:BENCH_NO_CLASS_ARCHIVE",
    "env:BENCH_NO_INSTRUMENTATION",
    "env:BENCH_OUTPUT_TOPIC",
    "env:BENCH_PERIOD_MS",
    "env:BENCH_TOPICS",
    "set:generator active-power:seed",
    "set:generator uc4-registry:seed",
    "set:job:readTimeoutS",
    "set:job:startTimeoutS",
    "set:uc1:log_max_mb",
    "set:uc2:allowedLatenessMs",
    "set:uc2:emitPeriodMs",
    "set:uc2:windowSizeMs",
    "set:uc3:allowedLatenessMs",
    "set:uc3:emitPeriodMs",
    "set:uc3:windowMethod",
    "set:uc4:gracePeriodMs",
    "set:uc4:triggerSeconds",
    "set:uc4:windowSizeMs",
})
#: how many settings still wait for a proof (270 when the inventory was made): UNPROVEN may
#: not grow; lower this whenever a proof is added
UNPROVEN_AT_START = 62


@cache
def _functions(path: Path) -> dict[str, str]:
    """Each test function of a file with its source, decorators (its parametrize) included."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            found[node.name] = "\n".join(text.splitlines()[start - 1:node.end_lineno])
    return found


def names_of(setting: str) -> list[str]:
    """The words a test that exercises a setting must say: the option flag (or the
    parameter click gives it), the key, the property or the variable (a Kubernetes
    variable also by its option's key)."""
    kind, _, rest = setting.partition(":")
    if kind == "cli":
        flag = rest.rsplit(" ", 1)[-1]
        return [flag, f"--no-{flag[2:]}", flag.lstrip("-").replace("-", "_")]
    if kind == "env":
        names = [rest]
        if rest.startswith("BENCH_K8S_"):
            names.append(rest.removeprefix("BENCH_K8S_").lower())
        return names
    last = rest.rsplit(":", 1)[-1]
    return [last.rsplit(".", 1)[-1]]


def mentions(source: str, name: str) -> bool:
    """Whether ``source`` names ``name`` as a whole word (``--threshold`` is not
    ``--threshold-rel-to-rate``, ``load`` is not ``loadType``)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", source) is not None


def test_every_setting_has_a_proof_or_waits_for_one() -> None:
    settings = inventory()
    unaccounted = sorted(settings - set(PROVEN) - UNPROVEN)
    assert not unaccounted, f"settings with no test showing their effect or refusal (add one to PROVEN): {unaccounted}"


def test_the_lists_hold_only_settings_the_code_has() -> None:
    settings = inventory()
    assert not sorted(set(PROVEN) - settings), "PROVEN names settings the code no longer has"
    assert not sorted(UNPROVEN - settings), "UNPROVEN names settings the code no longer has: remove them"
    assert not sorted(UNPROVEN & set(PROVEN)), "a proven setting is still listed as unproven: remove it there"
    assert len(UNPROVEN) <= UNPROVEN_AT_START


@pytest.mark.parametrize(("setting", "node"), sorted(PROVEN.items()))
def test_each_proof_names_a_test_that_exists(setting: str, node: str) -> None:
    path, _, name = node.partition("::")
    assert (ROOT / path).is_file(), f"{setting}: {path} does not exist"
    functions = _functions(ROOT / path)
    assert name.startswith("test_") and name in functions, f"{setting}: no test {name} in {path}"
    words = names_of(setting)
    assert any(mentions(functions[name], w) for w in words), (
        f"{setting}: {node} never names {' or '.join(words)}: point at a test that sets it")


def test_the_inventory_covers_every_kind_of_setting() -> None:
    kinds = {s.split(":", 1)[0] for s in inventory()}
    assert kinds == {"cli", "set", "config", "slo", "patcher", "env"}
    assert "cli:bench run --threshold" in inventory() and "config:StrategyDef.guessStrategy" in inventory()
