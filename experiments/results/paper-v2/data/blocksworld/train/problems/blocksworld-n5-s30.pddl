; domains.blocksworld.generator: blocks=5, seed=30, split=train
(define (problem blocksworld-n5-s30-train)
  (:domain blocksworld-4ops)
  (:objects b1 b2 b3 b4 b5)
  (:init
    (arm-empty)
    (on b1 b4)
    (on-table b2)
    (on-table b3)
    (on b4 b3)
    (on-table b5)
    (clear b1)
    (clear b2)
    (clear b5)
  )
  (:goal (and
    (on b3 b5)
  ))
)
