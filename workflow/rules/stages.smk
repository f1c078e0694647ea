# One rule per step of every stage that shuffledp.stages.discover() finds (docs/architecture.md), all of
# one shape: named inputs from the job's references, named outputs from the step's templates, log and
# benchmark named by the job's identity, the spec and io files as params, and one shell line.
from shuffledp.stages import discover, list_caption
from shuffledp.stages import report as report_stage

STAGES = discover()
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


def _job_rules(stage, step, table):
    """A step whose output files each carry a report flag of their own (``Output.job_report``, e.g.
    the report stage's pages, each flagged with the caption, category and subcategory of the table
    it renders): one rule per job, its files named outright."""
    for job in table.of_step(step.name):
        _job_rule(stage, step, job)


def _job_rule(stage, step, job):
    io = job_io(stage, step, job, ROOTS, STAGES)
    out = {}
    for o in step.outputs:
        files = io["output"][o.name]
        if o.job_report is not None:
            out[o.name] = [report(path, **dict(zip(("caption", "category", "subcategory"), o.job_report(job.spec, v))))
                           for v, path in files.items()]
        else:
            out[o.name] = list(files.values()) if isinstance(files, dict) else files

    rule:
        name:
            "_".join([stage.name, step.name, *(str(job.wildcards[w]) for w in step.wildcards)])
        input:
            **io["input"],
        output:
            **out,
        log:
            logs(stage, step).format(**job.wildcards),
        benchmark:
            benchmarks(stage, step).format(**job.wildcards)
        params:
            stage=lambda wildcards, _name=stage.name: _name,
            step=lambda wildcards, _name=step.name: _name,
            spec=lambda wildcards, _job=job: job_files(stage, step, _job)["spec"],
            io=lambda wildcards, _job=job: job_files(stage, step, _job)["io"],
        resources:
            mem_mb=step.mem_mb,
            runtime=step.runtime,
        conda:
            env_file()
        shell:
            "shuffledp step {params.stage} {params.step} --spec {params.spec:q} --io {params.io:q} > {log:q} 2>&1"

    for o in step.outputs:
        if o.final:
            files = io["output"][o.name]
            FINAL_TARGETS.extend(files.values() if isinstance(files, dict) else [files])


for _stage in STAGES.values():
    if not _stage.enabled(config):
        continue
    _table = job_tables(STAGES)[_stage.name]  # built once, shared with the io files' input records
    for _step in _stage.steps:
        if not _table.of_step(_step.name):
            continue
        if _step.rule_per_job:
            _job_rules(_stage, _step, _table)
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
