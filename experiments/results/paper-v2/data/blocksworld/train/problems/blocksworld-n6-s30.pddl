; domains.blocksworld.generator: blocks=6, seed=30, split=train
(define (problem blocksworld-n6-s30-train)
  (:domain blocksworld-4ops)
  (:objects b1 b2 b3 b4 b5 b6)
  (:init
    (arm-empty)
    (on b1 b3)
    (on b2 b6)
    (on-table b3)
    (on b4 b2)
    (on b5 b1)
    (on-table b6)
    (clear b4)
    (clear b5)
  )
  (:goal (and
    (on b3 b4)
  ))
)
