# One rule per step of every stage that shuffledp.stages.discover() finds (docs/architecture.md), all of
# one shape: named inputs from the job's references, named outputs from the step's templates, log and
# benchmark named by the job's identity, the spec and io files as params, and one shell line.
from shuffledp.stages import batch_label, batches, discover, list_caption, refuse_self_reading_batch
from shuffledp.stages import report as report_stage

STAGES = discover()
BATCHED = set()  # (stage, step) of every step whose jobs run in batches (workflow.batches)
# the per-file captions of output lists (absolute: Snakemake reads a relative caption from this file's folder)
CAPTION_FILES = os.path.abspath(os.path.join(".snakemake", "shuffledp", "captions"))


def _outputs(stage, step, table):
    out = {}
    for o in step.outputs:
        if o.over is not None:  # an output list: one file per value, the same values for every job
            files = stage_output_list(stage, step, o.name, step_values(step, o, table))
            flag = report_stage.figure_report(step, o)
            if flag is not None:  # each file in the report, its caption rendered for its value
                files = {v: report(p, **dict(zip(("caption", "subcategory"), list_caption(
                    stage, flag, o.over, v, CAPTION_FILES))), category=stage.title) for v, p in files.items()}
            out[o.name] = list(files.values())
            continue
        path = stage_output(stage, step, o.name)
        if o.directory:
            path = directory(path)
        # report: a figure's PDF as its PNG; a Markdown table through its HTML page (the report stage)
        flag = report_stage.figure_report(step, o)
        if flag is not None and not report_stage.rendered(step, o):
            path = report(path, caption=stage.caption(flag), category=stage.title, subcategory=flag.subcategory)
        out[o.name] = path
    return out


def _flagged(stage, step, o, job, files):
    """The files of output ``o`` of one job (``files``: its io file's entry), each with the report flag
    or directory() mark that ``_outputs`` gives the step's pattern, as a list."""
    if o.job_report is not None:  # each file flagged with its own caption, category and subcategory
        return [report(p, **dict(zip(("caption", "category", "subcategory"), o.job_report(job.spec, v))))
                for v, p in files.items()]
    flag = report_stage.figure_report(step, o)
    if o.over is not None:
        if flag is None:
            return list(files.values())
        return [report(p, **dict(zip(("caption", "subcategory"), list_caption(stage, flag, o.over, v, CAPTION_FILES))),
                       category=stage.title) for v, p in files.items()]
    path = directory(files) if o.directory else files
    if flag is not None and not report_stage.rendered(step, o):
        path = report(path, caption=stage.caption(flag), category=stage.title, subcategory=flag.subcategory)
    return [path]


def _explicit_rule(stage, step, jobs, label):
    """The rule of ``jobs`` (one job, or a batch of several, shuffledp.stages.batches), its files
    named outright: the union of the members' inputs and outputs; ``label`` names its log, benchmark and
    rule (the job's wildcard values, or batch<i>of<k>). The one shell line runs every member in order."""
    inputs, out = {}, {}
    for job in jobs:
        io = job_io(stage, step, job, ROOTS, STAGES)
        for name, paths in io["input"].items():
            inputs.setdefault(name, [])
            inputs[name] += [p for p in paths if p not in inputs[name]]
        for o in step.outputs:
            out.setdefault(o.name, [])
            out[o.name] += _flagged(stage, step, o, job, io["output"][o.name])
            if o.final:
                files = io["output"][o.name]
                FINAL_TARGETS.extend(files.values() if isinstance(files, dict) else [files])
    written = {str(p) for paths in out.values() for p in paths}
    inside = sorted(p for paths in inputs.values() for p in paths if p in written)
    if inside:  # a member reading another member's output: the step cannot be batched
        refuse_self_reading_batch(stage, step, inside[0])
    files = job_files(stage, step, jobs[0]) if len(jobs) == 1 else batch_files(stage, step, jobs)
    stem = "_".join([step.name, *label])

    rule:
        name:
            "_".join([stage.name, stem])
        input:
            **inputs,
        output:
            **out,
        log:
            f"{LOGS}/{stage.name}/{stem}.log",
        benchmark:
            f"{BENCH}/{stage.name}/{stem}.tsv"
        params:
            stage=lambda wildcards, _name=stage.name: _name,
            step=lambda wildcards, _name=step.name: _name,
            spec=lambda wildcards, _f=files: _f["spec"],
            io=lambda wildcards, _f=files: _f["io"],
            data=job_data(step),
        threads: step.threads or 1
        resources:
            mem_mb=step.mem_mb,
            runtime=step.runtime * len(jobs),  # the members run one after another
        localrule: step.local
        priority: step.priority
        conda:
            env_file()
        shell:
            "shuffledp step {params.stage} {params.step} --spec {params.spec:q} --io {params.io:q} > {log:q} 2>&1"


for _stage in STAGES.values():
    if not _stage.enabled(config):
        continue
    _table = job_tables(STAGES)[_stage.name]  # built once, shared with the io files' input records
    for _step in _stage.steps:
        if not _table.of_step(_step.name):
            continue
        _batches = batches(_stage, _step, _table.of_step(_step.name), config)
        if _batches is not None:  # workflow.batches: one rule per batch, its members run in one process
            BATCHED.add((_stage.name, _step.name))
            for _i, _members in enumerate(_batches):
                _explicit_rule(_stage, _step, _members, [batch_label(_i, len(_batches))])
            continue
        if _step.rule_per_job:  # one rule per job, named by its wildcard values
            for _job in _table.of_step(_step.name):
                _explicit_rule(_stage, _step, [_job], [str(_job.wildcards[w]) for w in _step.wildcards])
            continue

        rule:
            name:
                f"{_stage.name}_{_step.name}"
            input:
                unpack(job_inputs(_stage, _step, _table, STAGES)),
            output:
                **_outputs(_stage, _step, _table),
            log:
                logs(_stage, _step),
            benchmark:
                benchmarks(_stage, _step)
            params:
                # functions, not strings: a stage named like a folder ("data") is no path prefix
                stage=lambda wildcards, _name=_stage.name: _name,
                step=lambda wildcards, _name=_step.name: _name,
                spec=job_spec_file(_stage, _step, _table),
                io=job_io_file(_stage, _step, _table, STAGES),
                data=job_data(_step),  # the captions' data line (shuffledp.stages.data_summary)
            wildcard_constraints:
                **_step.wildcards,
            threads: _step.threads or 1  # Step.threads None: Snakemake's default (1), pools untouched
            resources:
                mem_mb=_step.mem_mb,
                runtime=_step.runtime,
            localrule: _step.local
            priority: _step.priority
            conda:
                env_file()
            shell:
                "shuffledp step {params.stage} {params.step} --spec {params.spec:q} --io {params.io:q} > {log:q} 2>&1"

        for _out in _step.outputs:
            if _out.final and _out.over is not None:
                FINAL_TARGETS.extend(p for j in _table.of_step(_step.name) for p in stage_output_list(
                    _stage, _step, _out.name, _out.values(j.spec), j.wildcards).values())
            elif _out.final:
                FINAL_TARGETS.extend(stage_output(_stage, _step, _out.name, j.wildcards)
                                     for j in _table.of_step(_step.name))


# ---- results/.jobs holds only this config's job files ------------------------------------------------
# Every job's spec and io files are written now (the params above then only look them up), and the
# files of results/.jobs that no job of this config names are removed: a dry run, or a run of another
# config, leaves files nothing reads. Never while another Snakemake run holds a lock on this folder
# (its jobs may read them), never outside the working folder, only files named like job files
# (shuffledp.stages.prune_job_files).
from shuffledp.stages import prune_job_files  # noqa: E402

for _stage in STAGES.values():
    if _stage.enabled(config):
        for _job in job_tables(STAGES)[_stage.name].jobs:
            if (_stage.name, _job.step) not in BATCHED:  # a batch's files were written with its rule
                job_files(_stage, _stage.step(_job.step), _job)
prune_job_files(JOBFILES, [p for files in _JOB_FILES.values() for p in files.values()])


# ---- the datasets of this run, real or stand-in, with checksums: printed when a run ends -------------


def _dataset_tables():
    """Processed table name -> path: the tables the end of a run lists, the files of the input that a
    step declares as its ``summary_input`` (the data stage's datasets table), in its one job."""
    found = {}
    for stage in STAGES.values():
        if not stage.enabled(config):
            continue
        for step in stage.steps:
            if step.summary_input is None:
                continue
            for job in job_tables(STAGES)[stage.name].of_step(step.name):
                paths = job_io(stage, step, job, ROOTS, STAGES)["input"][step.summary_input]
                found.update({os.path.splitext(os.path.basename(p))[0]: p for p in paths})
    return found


DATASET_TABLES = _dataset_tables()


def datasets_summary():
    """The datasets of this run, printed by onsuccess and onerror: never fails the run (an unreadable
    table is one line of the summary; anything else, one line saying the summary is unavailable)."""
    try:
        from shuffledp.datasets.availability import summary_text

        return summary_text(DATASET_TABLES, STALE_STANDINS)
    except Exception as exc:  # the run's own outcome stands, whatever the summary meets
        return f"shuffledp: the datasets summary is unavailable ({type(exc).__name__}: {exc})"
