"""zarr's shared codec-pipeline suite against zdt's pipeline, the way zarr runs it for its
own pipelines (copied into zarr's tests/ by .ci/zarr-suite)."""

from tests.test_codec_pipeline_suite import CodecPipelineTests


class TestZdtPipeline(CodecPipelineTests):
    pipeline_path = "zdt.pipeline.ZdtCodecPipeline"
