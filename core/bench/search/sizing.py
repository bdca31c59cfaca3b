"""Loads and resources sized for this machine from one probe, not taken from constants.

One instance of a use case sustains from under 5,000 to over 40,000 records/s on
machines of one kind (docs/performance.md), so a use case's fixed default loads showed
a curve on one machine and a flat table on the next. With ``--loads auto`` (the default
when no loads are given) bench first probes two instances at a heavy load
(:mod:`bench.search.prediction`; two, because a SUT process's fixed cost is shared by
its instances, :data:`bench.execution.autosize.PROBE_INSTANCES`): what they processed,
per instance, is the capacity ``c``, what the generators wrote is what the load path
(generator and broker) pushes. The loads are then placed between the capacity
boundaries, at :data:`MULTIPLES` (0.2, 1.3, 2.3) x ``c``, so that they need 1, 2 and 3
instances and no verdict sits on a boundary, where a repetition's noise decides it; as
many of them as the experiments' time fits (:func:`demands_within`). Only loads the
load path can push are kept.

A multiple beyond the load path that still needs its own demand is moved down to what
the path pushes. Where still too few fit (one instance keeps up with nearly all the
load path pushes, or the probe did not even saturate it), a lower CPU limit per
instance (``cpuPerInstance``) makes instances slower and the curve fits again
(:func:`lower_cpu`): one instance's records/s is then estimated from its CPU
(:mod:`bench.search.cpu_scaling`), and probed again only for a deep cut or an
unsaturated probe. Where the limit cannot be lowered (the user set it, or the SUT has
none), bench says so in one line with what to do.

Everything here is pure arithmetic on the probe's figures and on ``rate_of`` (a load
value -> its records/s), so it is unit-tested without a machine; the engine
(:mod:`bench.execution.autosize`) runs the probes and applies the result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from bench.search.cpu_scaling import cpu_for
from bench.search.load_values import RateOf, candidates_near, round_candidates, whole_candidates
from bench.search.sizing_record import PATH_HEADROOM, ProbeFigures

#: where the loads go, in capacities of one instance: inside the 1st, 2nd and 3rd
#: instance's share, never on a boundary, and nearer each share's lower edge than its
#: middle. The capacity is the probe's two instances' records/s per instance; one
#: instance alone does far less where the SUT process's fixed cost is all its own, and a
#: run's micro-batches, smaller than the probe's, read less per second than the probe's
#: did. So the lightest load asks 0.2 of the figure: one quarter-core UC1 instance failed
#: 5,700 records/s (0.3 x 19,142) where two kept up with 44,000, and earlier 5,000 (0.5 x
#: 10,005).
MULTIPLES = (0.2, 1.3, 2.3)
#: a micro-batch SUT's third load goes this share of the way from its multiple to what the
#: path pushes: two such instances behind their input read less than larger amounts do in
#: a steady run (two quarter-core UC1 instances read 23,172 records/s each, passed 53,000,
#: 2.3 x, and failed 64,000, which three passed; the path pushed 80,000). Halfway put it
#: on two eighth-core instances' boundary: from figures of 18,493-24,586 the roundest value
#: there was 60,000, which two failed three times (twice unstable) and passed once, and
#: three passed; two failed 70,000 and 74,000, three passed both. Three quarters of the
#: way gives 70,000 from any of those figures
BEYOND_TWO = 0.75
#: a load is kept clear of a boundary by this share of one instance's capacity: a
#: stepped load (UC4's levels, 4x apart) takes the nearest value inside
BOUNDARY_MARGIN = 0.15
#: a continuous load takes the roundest value (:func:`bench.search.load_values.round_candidates`)
#: within this factor of its target, so that two probes a tenth apart give one table. The
#: lightest takes it between this share of its target and the target, never heavier (one
#: instance alone reads less than the figure says, see :data:`MULTIPLES`), and a stretched
#: one never heavier either (its target is already a guess beyond the multiples). One moved
#: to what the load path pushes keeps its two digits (:data:`PATH_FILL`)
ROUND_BAND = 1.15
LIGHTEST_BAND = 0.75
#: a load moved down to what the load path pushes takes the first of these shares of it
#: that its value's rounding to two digits (up to 5 %) keeps within it
PATH_FILL = (0.97, 0.92)
#: the fewest distinct demands a sized run aims at; fewer lower the CPU limit
MIN_DEMANDS = 2
#: seconds of load a sized run's search may spend, at one experiment's duration (times
#: its repetitions) each:
#: ``k`` demands take at least ``2k - 1`` experiments (each load's demand passes and the
#: amount below it fails; the lightest needs no failure). So UC1's 90-s experiments show
#: 3 demands (450 s), UC2-UC4's 120-s ones 2 (360 s): a newcomer's first run, probe and
#: SUT starts included, stays near 7-8 minutes rather than 13 (docs/performance.md)
LOAD_BUDGET_S = 450.0
#: a saturated probe that asked this many times what its instances read is probed
#: again at :data:`CLOSER` times their records/s (:func:`probe_closer`)
FLOOD_RATIO = 10.0
CLOSER = 2.0
#: the lowest CPU limit per instance bench chooses by itself (cores): below it a
#: micro-batch's fixed cost dominates what an instance does
MIN_CPU = 0.05
#: the probes at most: a lowered CPU limit is estimated in proportion where it can be
#: (:data:`bench.execution.autosize.ESTIMATE_SHARE`), measured again only where not
MAX_PROBES = 2


def demand_of(rate: float, capacity: float) -> int:
    """Instances a records/s needs at ``capacity`` each."""
    return max(1, math.ceil(rate / capacity - 1e-9))


def sized_demand(rate: float, capacity: float) -> int:
    """The demand a sized load is chosen for: :func:`demand_of`, except that a load
    within :data:`BOUNDARY_MARGIN` below one instance's figure asks two. Only a stepped
    load's step is chosen there (:func:`step_below`), and one instance alone reads less
    than the probe's two did per instance (:data:`MULTIPLES`)."""
    share = rate / capacity
    return 2 if 1.0 - BOUNDARY_MARGIN < share <= 1.0 else demand_of(rate, capacity)


def clear_of_boundary(rate: float, capacity: float) -> bool:
    """Whether ``rate`` sits inside an instance's share, at least :data:`BOUNDARY_MARGIN` from its edges."""
    share = rate / capacity
    inside = share - math.floor(share)
    return share > BOUNDARY_MARGIN and BOUNDARY_MARGIN <= inside <= 1.0 - BOUNDARY_MARGIN


def choose_loads(capacity: float, usable: float, rate_of: RateOf,
                 multiples: Sequence[float] = MULTIPLES, lower_bound: bool = False,
                 batches: bool = False) -> dict[float, float]:
    """Load value -> records/s, one per demand of :data:`MULTIPLES` that the load path can
    push (``usable`` records/s), each clear of the capacity boundaries (the nearest clear
    value of a stepped load). ``lower_bound``: the capacity is only a lower bound (the
    probe's instances kept up), so the heaviest load goes up to what the path pushes,
    where its demand is more likely above the others' than at its multiple.
    ``batches``: the figure is a micro-batch SUT's, read by two instances behind their
    input, so a third demand's load goes :data:`BEYOND_TWO` of the way from its multiple
    to what the path pushes."""
    chosen: dict[float, float] = {}
    demands: set[int] = set()
    whole: dict[float, float] | None = None
    for m in multiples:
        targets = [m * capacity]
        stretched = m == multiples[-1] and stretches(batches, multiples, capacity, usable)
        if stretched:
            targets = [m * capacity + BEYOND_TWO * (usable - m * capacity)]
        elif lower_bound and m == multiples[-1] and len(multiples) > 1:
            targets = [f * usable for f in PATH_FILL if f * usable > m * capacity
                       and clear_of_boundary(f * usable, capacity)] + targets
        elif m * capacity > usable:
            # the heaviest the path pushes may still ask this demand, clear of its
            # boundaries: a curve up to the load path's limit rather than a lower CPU limit
            targets = [f * usable for f in PATH_FILL if demand_of(f * usable, capacity) == demand_of(
                m * capacity, capacity) and clear_of_boundary(f * usable, capacity)]
        fits: list[tuple[float, float, float]] = []
        for target in targets:
            near = candidates_near(target, rate_of, whole)
            if len(near) > 1:
                whole = near
                if m == multiples[0] and not stretched:
                    # a stepped load's lightest is the heaviest step at or below its
                    # multiple: one instance alone reads less than 0.2 of the figure
                    # (UC4's failed 1,024 records/s, 0.2-0.37 x it), and a lighter step is
                    # never further from a demand of one
                    fits = [(target / r, v, r) for v, r in near.items() if 0 < r <= min(target, usable)]
                    if fits:
                        break
            filled = not stretched and target != m * capacity  # at a share of the path: two digits
            if len(near) == 1 and not filled:  # a continuous load: the roundest value near the target first
                lo, hi = ((LIGHTEST_BAND * target, target) if m == multiples[0] and not stretched else
                          (target / ROUND_BAND, target) if stretched else (target / ROUND_BAND, target * ROUND_BAND))
                ranked = [*round_candidates(lo, hi, target, rate_of), *near.items()]
                keyed = [(float(i), v, r) for i, (v, r) in enumerate(ranked)]
            else:
                keyed = [(abs(math.log(r / target)), v, r) for v, r in near.items()]
            # a stretched load lies beyond what the proportional boundaries describe: it
            # only has to ask more than the others
            fits = [(key, v, r) for key, v, r in keyed
                    if 0 < r <= usable and v not in chosen and (
                        r > max(chosen.values(), default=0.0) if stretched else
                        clear_of_boundary(r, capacity) and demand_of(r, capacity) not in demands)]
            if fits:
                break
        if not fits and lower_bound and whole and m == multiples[-1] and len(multiples) > 1:
            fits = steps_above_bound(capacity, usable, whole, chosen, demands)
        if not fits:
            continue
        _, value, rate = min(fits)
        chosen[value] = rate
        demands.add(demand_of(rate, capacity))
    return dict(sorted(chosen.items()))


def steps_above_bound(capacity: float, usable: float, whole: dict[float, float], chosen: dict[float, float],
                      demands: set[int]) -> list[tuple[float, float, float]]:
    """A stepped load's heaviest where no step lies clear of a boundary of a lower bound:
    the heaviest step the path pushes that asks a demand of its own, as (key, value,
    records/s) with the heaviest first. A lower bound's boundaries are not the instances'
    own: two half-core UC4 instances kept up with the probe's 16,384 records/s (8,305
    each), a step at 1.97 x that figure, and the run sized one load and a flat table."""
    above = max(chosen.values(), default=0.0)  # the loads chosen so far, lighter multiples'
    return [(-r, v, r) for v, r in whole.items() if above < r <= usable and v not in chosen
            and demand_of(r, capacity) not in demands]


def stretches(batches: bool, multiples: Sequence[float], capacity: float, usable: float) -> bool:
    """Whether a micro-batch figure's third load goes part of the way to the path (:data:`BEYOND_TWO`)."""
    return batches and len(multiples) > 2 and usable > multiples[-1] * capacity


def resources_for(rates: Sequence[float], capacity: float) -> list[float]:
    """Instances 1 to one above the heaviest load's expected demand: the search finds each
    demand with room for one wrong guess."""
    top = max((sized_demand(r, capacity) for r in rates), default=1) + 1
    return [float(n) for n in range(1, top + 1)]


def probe_heavier(probe: ProbeFigures) -> bool:
    """Whether a probe whose instances kept up is worth repeating at the load the path is
    taken to push (:data:`PATH_HEADROOM`): where neither the instances nor the path fell
    behind, and the SUT is not micro-batch. A micro-batch SUT keeps up with more by
    growing its batches and reads about what it is given (two UC1 instances: all of
    40,000 records/s, and 37,669 each of 80,000), more than its runs' verdicts see: its
    first figure stands, a lower bound."""
    return not probe.saturated and not probe.path_limited and probe.source != "batches"


def probe_closer(probe: ProbeFigures) -> float | None:
    """The records/s to probe again at where a saturated probe asked many times what its
    instances did (:data:`FLOOD_RATIO`), else None. Such a flood costs the machine more
    than the SUT: on 2 cores the generator and broker pushing 40,000 records/s left two
    eighth-core instances of a CPU-bound SUT 193 records/s each, where one alone then
    passed 251 (the calibrated SUT with ``workUs``), and loads at 1.3 x the figure needed
    one instance. Probed again at :data:`CLOSER` x their records/s, they read their own."""
    group = probe.per_instance_rate * probe.instances
    if not probe.saturated or group <= 0 or probe.load_rate < FLOOD_RATIO * group:
        return None
    return CLOSER * group


def next_probe(probe: ProbeFigures) -> float | None:
    """The records/s to probe again at, by either rule (:func:`probe_heavier`,
    :func:`probe_closer`), or None where the probe's figure stands."""
    return PATH_HEADROOM * probe.load_rate if probe_heavier(probe) else probe_closer(probe)


def demands_within(duration: float, most: int = len(MULTIPLES)) -> int:
    """The demands a sized run shows whose least experiments fit :data:`LOAD_BUDGET_S`
    (at least :data:`MIN_DEMANDS`, at most ``most``)."""
    k = most
    while k > MIN_DEMANDS and (2 * k - 1) * float(duration) > LOAD_BUDGET_S:
        k -= 1
    return k


def lower_cpu(probe: ProbeFigures, usable: float, multiples: Sequence[float] = MULTIPLES) -> float | None:
    """The CPU limit per instance at which the heaviest of ``multiples`` fits the load path:
    the SUT's records/s taken as proportional to its CPU (a micro-batch's fixed cost
    makes it less than proportional: the next probe measures the truth). None where it
    cannot be lowered (no limit) or would fall below :data:`MIN_CPU`."""
    if probe.cpu <= 0 or probe.per_instance_rate <= 0:
        return None
    wanted = usable / max(multiples) / probe.per_instance_rate  # <= 1 when too few loads fit
    if not probe.saturated:
        wanted *= 0.7  # a lower bound: the instance is faster than it showed
    cpu = math.floor(probe.cpu * wanted * 1000) / 1000
    if cpu >= probe.cpu:
        return None
    return cpu if cpu >= MIN_CPU else (MIN_CPU if probe.cpu > MIN_CPU else None)


def steps_missing_a_demand(probe: ProbeFigures, chosen: dict[float, float], rate_of: RateOf,
                           multiples: Sequence[float] = MULTIPLES) -> dict[float, float] | None:
    """A stepped load's steps (value -> records/s) up to the heaviest multiple where no
    chosen load asks that multiple's demand, else None (a continuous load, whose every
    multiple has its value, or a probe without a figure). What :func:`step_cpu` and
    :func:`step_below` each mend their own way."""
    capacity, top = probe.per_instance_rate, max(multiples)
    if capacity <= 0 or demand_of(top * capacity, capacity) in {demand_of(r, capacity) for r in chosen.values()}:
        return None
    if candidates_near(top * capacity, rate_of, {}):
        return None  # a continuous load (a stepped one gets the empty steps)
    return whole_candidates(rate_of, most=top * capacity)


def step_cpu(probe: ProbeFigures, chosen: dict[float, float], rate_of: RateOf,
             multiples: Sequence[float] = MULTIPLES, fixed_cpu: float = 0.0) -> tuple[float, list[float]] | None:
    """(a lower CPU limit, the steps' records/s that then need their own demands) where a
    stepped load has no step near the heaviest multiple's demand, else None.

    UC4's levels are 4x apart: at 4,995 records/s per instance its steps were 1,024, 4,096
    and 16,384, so the sized loads needed 1 and 4 instances, and no amount of a 2-core
    machine's instances kept up with 16,384. At the CPU limit that makes the heaviest step
    below the multiple ask exactly it (one instance's records/s taken from its CPU less
    the SUT process's ``fixed_cpu``, :func:`bench.search.cpu_scaling.rate_at`) the steps
    need 1, 2, ... instances as the continuous loads do."""
    capacity, top = probe.per_instance_rate, max(multiples)
    steps = steps_missing_a_demand(probe, chosen, rate_of, multiples)
    if probe.cpu <= 0 or steps is None:
        return None
    below = [r for r in steps.values() if 0 < r < top * capacity and r <= probe.usable_rate]
    if not below:
        return None
    slower = max(below) / top  # records/s per instance at the lower limit
    cpu = math.floor(cpu_for(probe, slower, fixed_cpu) * 1000) / 1000
    if cpu < MIN_CPU or cpu >= probe.cpu:
        return None
    rates = list(choose_loads(slower, probe.usable_rate, rate_of, multiples).values())
    if distinct_demands(rates, slower) < min(MIN_DEMANDS, len(multiples)):
        return None
    return cpu, rates


def step_below(probe: ProbeFigures, chosen: dict[float, float], rate_of: RateOf,
               multiples: Sequence[float] = MULTIPLES) -> dict[float, float] | None:
    """Where the CPU limit is the user's and a stepped load has no step at the heaviest
    multiple's demand but one beyond it: the lightest chosen load and, in place of that
    step, the heaviest step below the multiple if it lies in the top
    :data:`BOUNDARY_MARGIN` of one instance's share (it then asks two,
    :func:`sized_demand`); else None.

    The step above asks many instances on a machine whose generator and broker share the
    cores with them: eighth-core UC4 instances read 4,596 records/s each in the probe;
    its steps 4,096 and 16,384 ask 0.89 and 3.6 x that. The run sized 16,384, which 2, 3,
    4 and 5 instances failed (7 fell just short), and found its curve only in a load
    measured once more: 4,096 failed on one and passed on two (14 minutes)."""
    capacity, top = probe.per_instance_rate, max(multiples)
    steps = steps_missing_a_demand(probe, chosen, rate_of, multiples)
    if steps is None or not chosen or max(demand_of(r, capacity) for r in chosen.values()) < demand_of(
            top * capacity, capacity):
        return None  # no chosen step beyond the heaviest multiple's demand
    lightest = min(chosen.values())
    below = {v: r for v, r in steps.items() if lightest < r <= min(capacity, probe.usable_rate)
             and sized_demand(r, capacity) == 2}
    if not below:
        return None
    value = max(below, key=lambda v: below[v])
    return {**{v: r for v, r in chosen.items() if r == lightest}, value: below[value]}


def distinct_demands(rates: Sequence[float], capacity: float) -> int:
    return len({sized_demand(r, capacity) for r in rates})


def plan(probe: ProbeFigures, rate_of: RateOf, *, given_rates: Sequence[float] | None = None,
         cpu_fixed: str | None = None, multiples: Sequence[float] = MULTIPLES, halve: bool = True,
         fixed_cpu: float = 0.0) -> tuple[dict[float, float], float | None, str]:
    """From one probe: (chosen load -> records/s, a lower CPU limit to probe again at or
    None, why). ``given_rates``: the user's loads' records/s (only resources are sized);
    ``cpu_fixed``: why the CPU limit may not be lowered (the user set it), or None;
    ``halve``: False where the probe already ran at half the use case's limit (:func:`halved`);
    ``fixed_cpu``: the cores the SUT process spends whatever its load (:mod:`bench.search.cpu_scaling`)."""
    capacity, usable = probe.per_instance_rate, probe.usable_rate
    if capacity <= 0:
        return {}, None, "the probe's instance processed nothing"
    if given_rates is not None:
        return {}, None, f"resources for the given loads at {capacity:,.0f} records/s per instance"
    batches = probe.saturated and probe.source == "batches"
    chosen = choose_loads(capacity, usable, rate_of, multiples, lower_bound=not probe.saturated, batches=batches)
    stretched = (f"; the heaviest {BEYOND_TWO:.0%} of the way from {multiples[-1]:g} x to the {usable:,.0f} "
                 "records/s the load path pushes (a micro-batch SUT's larger amounts do better than this figure)"
                 if stretches(batches, multiples, capacity, usable) else "")
    enough = distinct_demands(list(chosen.values()), capacity) >= min(MIN_DEMANDS + 1, len(multiples))
    if probe.saturated and cpu_fixed is None and (stepped := step_cpu(probe, chosen, rate_of, multiples,
                                                                            fixed_cpu)):
        limit, rates = stepped
        return chosen, limit, (f"the load's steps put no load at {max(multiples):g} x the probe's "
                               f"{capacity:,.0f} records/s per instance: a lower CPU limit ({limit:g} core) puts "
                               f"its {max(rates):,.0f} records/s there")
    if probe.saturated and cpu_fixed is not None and (below := step_below(probe, chosen, rate_of, multiples)):
        heavier = max(below.values())
        return below, None, (f"the load's steps put no load at {max(multiples):g} x the probe's {capacity:,.0f} "
                             "records/s per instance and the CPU limit stays: the step below, "
                             f"{heavier:,.0f} records/s ({heavier / capacity:.2f} x), asks two instances, as one "
                             "alone reads less than the probe's two did each")
    if probe.saturated and enough:
        return chosen, None, (f"loads at {', '.join(f'{m:g}' for m in multiples)} x the probe's "
                              f"{capacity:,.0f} records/s per instance, between the boundaries where verdicts "
                              f"are unstable{stretched}")
    why = (f"the probe's instances kept up with it: {capacity:,.0f} records/s per instance is a lower bound, "
           "the loads may need fewer instances than sized" if not probe.saturated else
           f"one instance takes {capacity:,.0f} of the {usable:,.0f} records/s the load path can push")
    if cpu_fixed is None:
        cpu = (halved(probe) if halve else None) or lower_cpu(probe, usable, multiples)
        if cpu is not None:
            return chosen, cpu, f"{why}: a lower CPU limit per instance ({cpu:g} core) makes room for a curve"
    return chosen, None, why


def halved(probe: ProbeFigures) -> float | None:
    """Half the CPU limit where a micro-batch SUT's instances kept up with the probe and
    the load path did too, else None (or where half is below :data:`MIN_CPU`).

    Such a figure is only a lower bound, and no heavier probe tells how far: a micro-batch
    SUT behind its input reads about what it is given, in ever larger batches. On a machine
    where two quarter-core UC1 instances kept up with 40,000 records/s (20,047 each), one
    instance alone then passed 25,000 and two passed 74,000, the most the path pushed: two
    runs read ``4000: 1, 25000: 1, 74000: 2``. At an eighth of a core on that machine two
    instances fell behind 40,000 (17,863 each) and the loads sized from it showed three
    demands."""
    if probe.saturated or probe.source != "batches" or probe.path_limited:
        return None
    return half_cpu(probe.cpu)


def half_cpu(cpu: float) -> float | None:
    """Half a CPU limit, to the thousandth of a core below; None without a limit or where
    half is below :data:`MIN_CPU`. Both the probe again at half the limit and the advice to
    lower it take this value."""
    half = math.floor(cpu / 2 * 1000) / 1000
    return half if cpu > 0 and half >= MIN_CPU else None


def advice(chosen: dict[float, float], capacity: float, cpu_fixed: str | None) -> str | None:
    """One line of what to do where the sized loads show fewer than :data:`MIN_DEMANDS` demands."""
    if distinct_demands(list(chosen.values()), capacity) >= MIN_DEMANDS:
        return None
    how = (f"{cpu_fixed} keeps the CPU limit; lower it (--set sut.cpuPerInstance=...) or"
           if cpu_fixed else "the CPU limit cannot be lowered further;")
    return (f"too few loads fit what the load path can push to show a curve: {how} give loads "
            "(--loads ...) or more generator instances")
