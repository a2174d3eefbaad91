"""The ``docker`` driver: each sandbox a container from a local image (``driver``), made by ``container``
through the engine's CLI (``engine``), from an image built offline (``images``, ``base_image``,
``rootfs``), every verb run by a stdlib helper inside it (``helper``); ``spec`` is the task's block."""
